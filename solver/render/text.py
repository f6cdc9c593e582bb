"""Reports for people: the same `Result` as a terminal report or Markdown; explanations and why-not answers.

The report follows SkyPilot's optimizer output: the chosen plan with every number behind it, a candidate table
with a CHOSEN mark, then what could not work and why. One vocabulary for columns (accelerator, mode, system), one
line per accelerator and mode, repeated reasons collapsed, money formatted, and every piece of user or catalog
text cleaned of control characters (`safe.clean`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

from tabulate import tabulate

from ..estimate.checkpoints import CheckpointFigures
from ..estimate.cost import RISK_LINES
from ..inputs.units import si, usd
from ..solve.plan import ExcludedOption, Plan, Result
from .cash_view import cash_section
from .safe import clean
from .tco_view import tco_table

LINE_LABEL = {"compute": "compute", "network_storage": "network", "spares": "hot spares",
              "resale_credit": "resale after the run", "capital": "cost of capital",
              "deposit_capital": "cost of capital: deposits on order", "support": "support contracts",
              "facility": "facility (hall)", "energy": "energy", "storage": "storage (checkpoints, data)",
              "data_transfer": "data transfer", "orchestration": "orchestration + observability",
              "porting": "engineering: porting", "operations": "engineering: operations",
              "recovery": "engineering: failure recovery", "failure_rework": "risk: failure rework",
              "throughput": "risk: run length (expected)", "lateness": "risk: lateness (expected)",
              "consumer_risk": "risk: consumer hardware", "estimate_price": "risk: estimated price",
              "tail": "risk: tail premium (mean-CVaR)", "rules": "rules"}
AFTER_RUN_TEXT = {"resell": "held from delivery to the end of the run, then sold at its resale value",
                  "reuse": "held from delivery to the end of the run, charged straight-line depreciation for that time",
                  "idle": "written off in full (policy.after_run: idle)"}
REASON_WIDTH = 100
"""Widest reason cell of the exclusion table (the table stays inside ~130 columns)."""
MAX_LISTED = 6
"""Ids listed in a collapsed line before "… and N more" (all of them with --verbose and in JSON)."""


OFFER_NAME = {"buy": "buy", "cloud": "on demand", "cloud-reserved": "reserved", "cloud-spot": "spot",
              "managed": "managed"}
"""How a buyer names an offer (the catalog's contracts), for a plan's `offer` (`options.OFFERS`)."""


def day_count(days: float) -> str:
    """A run's length in days: whole days from 10, one decimal below (a 0.4-day run is not "0")."""
    return f"{days:,.0f}" if days >= 9.95 else f"{days:.1f}"


def expected_count(x: float) -> str:
    """An expected number of events as a reader can use it: ~12 for many, 0.35 for fewer than one, never "~0"
    for a chance that is small but not nil (a short run on one node: 0.002)."""
    if x >= 9.5:
        return f"~{x:,.0f}"
    if x >= 0.995:
        return f"~{x:.1f}"
    return f"{x:.2g}" if x > 0 else "0"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def exact_usd(x: float) -> str:
    """Dollars to the dollar: for limits and boundaries, where $411k -> $411k would hide the change."""
    return f"-${abs(x):,.0f}" if x < 0 else f"${x:,.0f}"


def status_line(r: Result) -> str:
    limit = r.stopped_by or "time limit"
    label = {"optimal": "OPTIMAL (proven)", "feasible": f"FEASIBLE ({limit} hit; not proven optimal)",
             "infeasible": "INFEASIBLE", "unknown": f"UNKNOWN ({limit} hit before any plan was found)"}[r.status]
    extra = ""
    if r.status == "feasible":
        gap = r.gap
        extra = (f": the best plan found so far; the optimum is at most {gap:.1%} better (objective {r.objective:,}, "
                 f"proven bound {r.bound:,})" if gap is not None else ": the best plan found so far; no bound on how "
                 "much better the optimum is")
        extra += "; the answer may change with more time" if r.stopped_by else ""
    return clean(f"plan '{r.problem_name}' as of {r.as_of}: {label}{extra}")


def _quote_text(p: Plan) -> list[str]:
    out = []
    for q in p.quotes:
        price = f"${q.price:,.2f}/GPU-h" if q.mode == "cloud" else (
            f"{usd(q.price)}/node-month" if q.mode == "managed" else f"{usd(q.price)}/node")
        if q.mode == "buy":
            when = f"order {q.ordered}, delivered {q.delivered}, ready {q.ready}"
            if q.wait_days:
                when += f", waits {plural(q.wait_days, 'day')}"
        else:
            contract = (q.contract or "on_demand").replace("_", "-")
            if q.commit_months > 0:
                used = p.training_days * 24.0 / 730.0
                contract += (f", committed {q.commit_months:g} months billed in full, used {used:.1f}"
                             if q.commit_months > used else f", committed {q.commit_months:g} months, used {used:.1f}")
            if q.max_term_months is not None:
                contract += f", term up to {q.max_term_months:.1f} months (then ${q.after_term_rate:,.2f}/GPU-h)"
            when = f"{contract}, ready {q.ready}"
        out.append(f"{q.id} x{q.nodes} ({q.vendor}, {price}, {q.kind}, {when})")
    return out


def plan_block(p: Plan, deadline: date | None = None, budget: float | None = None, applies_to: str = "cash",
               head: Sequence[str] = (), median_finish: date | None = None) -> str:
    """The chosen plan with every number behind it; `head`: the decision lines under its title."""
    lines = [f"CHOSEN  {p.accelerator} · {p.system} · {p.offer or p.mode}  —  {plural(p.nodes, 'node')} = "
             f"{plural(p.gpus, 'GPU')}", *head]
    q = _quote_text(p)
    lines.append(f"  quotes        {q[0]}")
    lines += [f"                {x}" for x in q[1:]]
    lines.append(f"  schedule      planned start {p.start} -> finish {p.finish} ({p.training_days:.1f} days of "
                 "training, quotes at their P90 lead time)")
    if median_finish is not None:
        slack = ""
        if deadline is not None:
            days = (deadline - median_finish).days
            slack = (f": {plural(days, 'day')} before the deadline {deadline}" if days >= 0 else
                     f": {plural(-days, 'day')} after the deadline {deadline}")
        lines.append(f"                median finish {median_finish}{slack}")
    elif deadline is not None:
        lines.append(f"                deadline {deadline}, {plural((deadline - p.finish).days, 'day')} after the "
                     "planned finish")
    lines.append(f"  memory/GPU    {p.memory_required_gb:.1f} GB required of {p.memory_available_gb:g} GB "
                 f"(recompute {p.recompute}, tensor parallel {p.tensor_parallel})")
    lines.append(f"  throughput    MFU {p.utilisation:.1%} x scale-out {p.efficiency:.1%}; {p.flops:.3g} FLOPs; "
                 f"{si(p.gpu_hours)} GPU-hours incl. {expected_count(p.interruptions)} expected interruptions")
    if p.checkpoint is not None:
        lines.append(f"  checkpoint    {checkpoint_text(p.checkpoint)}")
    site = f"{p.power_kw:,.0f} kW IT" + (f" in {plural(p.racks, 'rack')}" if p.racks is not None else
                                        " (not on your site)")
    lines.append(f"  power         {site}")
    bud = f"; budget {usd(budget)} ({applies_to})" if budget else ""
    lines.append(f"  cost          {usd(p.total_cost)} risk-adjusted completion cost (expected over the scenarios: "
                 f"what this run consumes); cash {usd(p.total_cash)} (expected: what is paid){bud}")
    if p.mode == "buy":
        lines.append(f"  owning        bought hardware {AFTER_RUN_TEXT[p.after_run]}; capital, support and the hall "
                     "are charged for the time held (policy.after_run)")
    fabrics = sorted({q.fabric for q in p.quotes})
    if len(fabrics) > 1:
        lines.append(f"  fabric        nodes on {len(fabrics)} fabrics: {', '.join(fabrics)} (policy.max_fabrics)")
    rows = []
    for name, v in p.lines.cost.items():
        cash = p.lines.cash.get(name)
        if abs(v) < 0.5 and abs(cash or 0.0) < 0.5:
            continue
        rows.append([LINE_LABEL.get(name, name), usd(v), usd(cash) if cash is not None and name not in RISK_LINES
                     else "-"])
    rows.append(["total", usd(p.total_cost), usd(p.total_cash)])
    table = tabulate(rows, headers=["line", "cost", "cash"], tablefmt="simple", colalign=("left", "right", "right"))
    lines += ["    " + x for x in table.splitlines()]
    if p.rules_applied:
        lines.append(f"  rules applied {', '.join(p.rules_applied)}")
    return clean("\n".join(lines))


def checkpoint_text(c: CheckpointFigures) -> str:
    """One line: size, Young/Daly interval, write time, the cluster's MTBF, the cost per successful checkpoint."""
    secs = c.write_hours * 3600.0
    write = f"{secs:.0f} s" if secs < 90 else f"{secs / 60:.1f} min"
    size = f"{c.size_tb:.2f} TB" if c.size_tb >= 0.1 else f"{c.size_tb * 1000:.1f} GB"
    if not math.isfinite(c.interval_hours) or c.cost_per_successful_usd is None:
        return f"{size}, written in {write}; no interruptions expected"
    return (f"{size} every {c.interval_hours * 60:.0f} min (written in {write}; "
            f"Young/Daly at a cluster MTBF of {c.mtbf_hours:.0f} h); {c.successful:,.0f} successful checkpoints, "
            f"{usd(c.cost_per_successful_usd)} each")


def _pct(p: float | None) -> str:
    return "-" if p is None else f"{p:.0%}"


def decision_lines(r: Result) -> list[str]:
    """What the choice rests on, under the plan's title: its expected completion cost with the sampling error,
    the chance of the deadline and the expected days late at the price of a day, and the steps up in confidence."""
    chosen = r.plan
    stats = (r.extra.get("risk") or {}).get(chosen.option) if chosen is not None else None
    if chosen is None or stats is None:
        return []
    pricing = r.extra.get("pricing")
    what = "expected completion cost" if not pricing or pricing.cvar_weight <= 0 else \
        f"expected completion cost + {pricing.cvar_weight:g} x its CVaR95 premium"
    out = [f"  decision      lowest {what}: {usd(chosen.total_cost)} (sampling error "
           f"{usd(stats.objective_std_error)}, {stats.scenarios:,} scenarios)"]
    if stats.p_deadline is not None and pricing is not None and pricing.late_after_day is not None:
        by = r.as_of + timedelta(days=pricing.late_after_day)
        price = (f"each late day priced at {usd(pricing.late_usd_per_day)}" if pricing.late_usd_per_day > 0 else
                 "late days not priced (risk.money.delay_cost_usd_per_day is 0)")
        out.append(f"                {stats.p_deadline:.0%} chance to finish by {by}; "
                   f"{stats.late_days_expected:.1f} days late expected ({price})")
    steps = r.extra.get("steps") or ()
    if steps:
        out.append("                more certainty: " + ", ".join(_step_text(g, chosen) for g in _same_plan(steps)))
    return [clean(x) for x in out]


def _same_plan(steps: Sequence[Any]) -> list[list[Any]]:
    """Consecutive steps reached by the same plan, together (one plan that meets 80% may meet 90% too)."""
    groups: list[list[Any]] = []
    for s in steps:
        if groups and (groups[-1][-1].plan.option, groups[-1][-1].plan.nodes) == (s.plan.option, s.plan.nodes):
            groups[-1].append(s)
        else:
            groups.append([s])
    return groups


def _step_text(group: Sequence[Any], chosen: Plan) -> str:
    step = group[-1]
    p = step.plan
    where = f"{plural(p.nodes, 'node')}" + ("" if p.pair == chosen.pair else f" of {p.accelerator} {p.offer or p.mode}")
    targets = " and ".join(f"{s.target:.0%}" for s in group)
    return f"{targets} for +{usd(step.delta_usd)} ({where}, {step.p_deadline:.1%})" + \
        ("" if step.proven else " [not proven: time limit]")


def risk_lines(r: Result) -> str:
    """The chosen plan's spread by scenarios under its cost lines (empty without a risk table)."""
    chosen = r.plan
    stats = (r.extra.get("risk") or {}).get(chosen.option) if chosen is not None else None
    if chosen is None or stats is None:
        return ""
    day = _day_of(r)
    return clean(f"\n  risk          finish P50 {day(stats.finish_p50)}, P80 {day(stats.finish_p80)}, "
                 f"P90 {day(stats.finish_p90)}; cost P90 {usd(stats.cost_p90)}, CVaR95 {usd(stats.cvar95)} "
                 f"(seed {stats.seed})")


def _day_of(r: Result) -> Any:
    def day(d: int) -> str:
        return str(r.as_of + timedelta(days=d))
    return day


def risk_table(r: Result, fmt: str = "simple", top: int | None = None) -> str:
    """Chosen plan and runners-up by scenarios (answers/risk.py): the objective and the sampling error of its
    difference to the chosen plan's, the chance of the deadline, the expected days late, dates, the cost's spread."""
    risk = r.extra.get("risk") or {}
    se = r.extra.get("risk_difference_se") or {}
    plans = ([(r.plan, True)] if r.plan else []) + [(a.plan, False) for a in r.alternatives]
    if top is not None:
        plans = plans[: max(1, top)]
    day = _day_of(r)
    rows = []
    for p, chosen in plans:
        st = risk.get(p.option)
        if st is None:
            continue
        diff = "" if chosen or p.option not in se else f"±{usd(se[p.option])}"
        rows.append(["CHOSEN" if chosen else "", p.accelerator, p.offer or p.mode, p.nodes, usd(p.total_cost), diff,
                     _pct(st.p_deadline), "-" if st.p_deadline is None else f"{st.late_days_expected:.1f}",
                     day(st.finish_p50), day(st.finish_p90), usd(st.cost_p90), usd(st.cvar95)])
    return clean(tabulate(rows, headers=["", "accelerator", "mode", "nodes", "objective", "± vs chosen",
                                         "P(deadline)", "days late", "finish P50", "finish P90", "P90 cost",
                                         "CVaR95"], tablefmt=fmt))


def unpriced_lines(r: Result) -> list[str]:
    """One line per unpriced quote: its break-even price, or why no price can make it the plan."""
    out = []
    for be in r.extra.get("unpriced", []):
        head = f"{be['quote']} ({be['system']}, {be['mode']}, ready {be.get('ready') or '?'}): "
        if be.get("price") is not None:
            unit = be["unit"].replace("usd ", "")
            money = f"${be['price']:,.2f}" if be["mode"] == "cloud" else usd(be["price"])
            out.append(head + f"chosen at {money} {unit} or less")
        elif be.get("reasons"):
            out.append(head + "no price wins: " + "; ".join(be["reasons"]) +
                       ("" if be.get("proven", True) else " [not proven minimal: time limit]"))
        else:
            out.append(head + be.get("note", ""))
    return [clean(x) for x in out]


def render_frontier(points: Sequence[Any], deadline: date | None, fmt: str = "simple") -> str:
    """`plan frontier`: one row per proven point, fastest first, the chosen plan marked."""
    rows = []
    for pt in points:
        p = pt.plan
        note = "after deadline" if not pt.within_deadline else ""
        if not pt.proven:
            note = (note + "; " if note else "") + "not proven"
        rows.append(["CHOSEN" if pt.chosen else "", str(p.finish), _pct(pt.p_deadline), usd(p.total_cost),
                     usd(p.total_cash), p.accelerator, p.offer or p.mode, _provider(p), p.nodes, p.gpus, str(p.start),
                     note])
    head = ["", "finish", "P(deadline)", "expected cost", "cash", "accelerator", "mode", "provider", "nodes", "GPUs",
            "start", "note"]
    title = ("Time-cost frontier: each row is the plan with the lowest risk-adjusted completion cost that finishes by "
             "its date as planned (proven optimal), fastest first" +
             (f"; P(deadline) is the chance of finishing by your deadline, {deadline}" if deadline else "") + ":")
    return clean(title + "\n" + tabulate(rows, headers=head, tablefmt=fmt)) + "\n"


def _provider(p: Plan) -> str:
    return " + ".join(dict.fromkeys(q.vendor for q in p.quotes))


def render_sweep(axes: Sequence[Any], rows: Sequence[Any], fmt: str = "simple") -> str:
    """`plan sweep`: one row per grid point, in grid order (the first axis slowest)."""
    table = []
    for r in rows:
        values = [s.partition("=")[2] for s in r.sets]
        p, risk = r.plan, r.risk
        if p is None:
            why = "; ".join(r.conflict) if r.conflict else ("time limit" if r.status != "infeasible" else "")
            table.append([*values, r.status.upper(), "", "", "", "", "", "", "", "", why])
            continue
        pd = "" if risk is None or risk["p_deadline"] is None else f"{risk['p_deadline']:.0%}"
        table.append([*values, r.status if r.status != "optimal" else "", p["accelerator"], p["offer"], p["nodes"],
                      p["finish"], usd(p["cost_usd"]), usd(p["cash_usd"]), pd,
                      usd(risk["cost_p90_usd"]) if risk else "", ""])
    head = [a.path for a in axes] + ["status", "accelerator", "mode", "nodes", "finish", "cost", "cash",
                                     "P(deadline)", "P90 cost", "why no plan (minimal conflict)"]
    title = f"{plural(len(rows), 'what-if')}, each solved to optimality on its own (blank status = proven optimal):"
    return clean(title + "\n" + tabulate(table, headers=head, tablefmt=fmt)) + "\n"


def candidates_table(r: Result, fmt: str = "simple", top: int | None = None) -> str:
    rows = []
    entries = ([(r.plan, 0.0, 0.0, True)] if r.plan else []) + \
        [(a.plan, a.delta_usd, a.settled_usd, False) for a in r.alternatives]
    if top is not None:
        entries = entries[: max(1, top)]
    for p, delta, settled, chosen in entries:
        est = "*" if any(q.kind == "estimate" for q in p.quotes) else ""
        offer = OFFER_NAME.get(p.offer or p.mode, p.mode)
        rows.append(["CHOSEN" if chosen else "", p.accelerator, offer, p.system + est, p.nodes, p.gpus,
                     str(p.start), str(p.finish), day_count(p.training_days),
                     usd(p.total_cost) + ("~" if settled else ""),
                     "" if chosen else ("+" if delta >= 0 else "-") + usd(abs(delta)), usd(p.total_cash)])
    table = clean(tabulate(rows, headers=["", "accelerator", "offer", "system", "nodes", "GPUs", "start", "finish",
                                          "days", "cost", "delta", "cash"], tablefmt=fmt))
    settled = [a for a in r.alternatives[: None if top is None else max(0, top - 1)] if a.settled_usd]
    if settled:
        most = max(a.settled_usd for a in settled)
        places = "first or second" if (top or 0) <= 2 else f"in the first {top}"
        table += (f"\n~ best plan found, not proven the best of its row: it cannot rank {places}, so it was "
                  f"searched only to within 5% (its best costs at most {usd(most)} less); --exact-alternatives "
                  f"searches every row to the end.")
    return table


def _collapse(groups: Sequence[str], verbose: bool) -> list[str]:
    """Group ids for a table cell, quote capacities collapsed into one entry."""
    caps = [g for g in groups if g.startswith("quotes.") and g.endswith(".max_nodes")]
    rest = [g for g in groups if g not in caps]
    if len(caps) > 1 and not verbose:
        rest.append(f"quotes.*.max_nodes ({plural(len(caps), 'quote')})")
    else:
        rest += caps
    return rest


def _reason_cell(e: ExcludedOption, verbose: bool, brief: bool = False) -> str:
    if len(e.reasons) == 1 and e.reasons[0].group is not None and not brief:
        x = e.reasons[0]
        text = f"{x.group} ({x.text}; {x.where})"
    else:
        text = "; ".join(_collapse([x.group or x.text for x in e.reasons], verbose))
    if not e.proven:
        text += " [not proven minimal: time limit]"
    return text


def excluded_rows(r: Result, modes_allowed: Sequence[str] | None, verbose: bool) -> list[list[str]]:
    """One row per accelerator and mode (or accelerator without a quote). What one system of a pair cannot do is
    added to the pair's row under the system's name; what is the same for every accelerator of a mode — a mode
    the policy rules out, buying without a site — is one row for the whole mode."""
    cells: dict[tuple[str, str], list[ExcludedOption]] = {}
    by_system: dict[tuple[str, str], dict[str, list[str]]] = {}
    whole_mode: dict[str, tuple[str, list[str]]] = {}
    for e in r.excluded:
        mode = e.mode or "-"
        text = e.reasons[0].text if e.reasons else ""
        if e.mode and modes_allowed is not None and e.mode.split("-")[0] not in modes_allowed and (
                [x.group for x in e.reasons] == ["policy.modes"] or (e.system and text.startswith("no site"))):
            whole_mode.setdefault(e.mode, ("policy.modes (mode not allowed)", []))[1].append(e.accelerator)
        elif [x.group for x in e.reasons] in (["policy.accelerators"], ["policy.vendors"]):
            # one row for everything the user's own list leaves out, not one per accelerator and mode
            whole_mode.setdefault("all", (_reason_cell(e, verbose), []))[1].append(e.accelerator)
        elif e.system and text.startswith("no site"):
            whole_mode.setdefault(mode, (text, []))[1].append(e.accelerator)
        elif e.system:
            by_system.setdefault((e.accelerator, mode), {}).setdefault(text, []).append(e.system)
            cells.setdefault((e.accelerator, mode), [])
        else:
            cells.setdefault((e.accelerator, mode), []).append(e)
    rows = []
    for key in sorted(cells):
        systems = sorted(by_system.get(key, {}).items())
        parts = [_reason_cell(e, verbose, brief=bool(systems)) for e in cells[key]]
        parts += [f"{', '.join(names)}: {text}" for text, names in systems]
        rows.append([key[0], key[1], "; ".join(parts)])
    for mode, (why, accels) in sorted(whole_mode.items()):
        names = sorted(set(accels))
        rows.append([f"(all {len(names)})", mode, why + (f": {', '.join(names)}" if verbose else "")])
    return rows


def excluded_table(r: Result, modes_allowed: Sequence[str] | None = None, fmt: str = "simple",
                   verbose: bool = False) -> str:
    rows = excluded_rows(r, modes_allowed, verbose)
    widths = [None, None, REASON_WIDTH] if fmt == "simple" and not verbose else None  # wrapped, never cut
    return clean(tabulate(rows, headers=["accelerator", "mode", "why it cannot work (a minimal set of your "
                                         "constraints that rules it out)"], tablefmt=fmt, maxcolwidths=widths))


def quote_notices(r: Result, verbose: bool) -> list[str]:
    """One line each for expired quotes and quotes dated after as_of (every id with --verbose)."""
    out = []
    for items, what, hint in ((r.expired, "expired before", "--allow-expired uses them"),
                              (r.not_yet_quoted, "dated after", "they did not exist yet")):
        if not items:
            continue
        what = what if what != "dated after" else ("is dated after" if len(items) == 1 else "are dated after")
        tail = (": " + ", ".join(f"{q} ({d})" for q, d in items)) if verbose else "; --verbose lists them"
        out.append(f"{plural(len(items), 'quote')} {what} {r.as_of} and not used ({hint}{tail})")
    return out


def render_result(r: Result, *, deadline: date | None = None, budget: float | None = None,
                  applies_to: str = "cash", modes: Sequence[str] | None = None, top: int | None = None,
                  markdown: bool = False, verbose: bool = False) -> str:
    """The `plan solve` report (terminal table or Markdown)."""
    warnings = list(r.warnings) + quote_notices(r, verbose)
    if r.as_of_defaulted:
        warnings.insert(0, f"as_of not set: planning as of today, {r.as_of}")
    fmt = "github" if markdown else "simple"
    out: list[str] = ([f"# Plan: {clean(r.problem_name)}", "", f"*{status_line(r)}*", ""] if markdown else
                      [status_line(r), ""])
    if r.plan:
        stats = (r.extra.get("risk") or {}).get(r.plan.option)
        median = r.as_of + timedelta(days=stats.finish_p50) if stats is not None else None
        block = plan_block(r.plan, deadline, budget, applies_to, decision_lines(r), median)
        block += risk_lines(r)
        out += (["## Chosen plan", "", "```", block, "```", ""] if markdown else [block, ""])
        out += cash_section(r.plan, markdown)
    if warnings:
        out += (["## Warnings", ""] + [f"- {clean(w)}" for w in warnings] + [""] if markdown else
                ["WARNINGS"] + [f"  ! {clean(w)}" for w in warnings] + [""])
    unpriced = unpriced_lines(r)
    if unpriced:
        out += (["## Hardware without a price yet", ""] + [f"- {x}" for x in unpriced] + [""] if markdown else
                ["Hardware without a price yet (the price at which it would become the plan):"]
                + [f"  {x}" for x in unpriced] + [""])
    if r.plan or r.alternatives:
        title = ("Best plan for each accelerator and way to get it (buy, cloud on demand, reserved, spot, managed) "
                 "that can work (* = rests on an estimated price):")
        out += (["## Candidates", "", candidates_table(r, fmt, top), ""] if markdown else
                [title, candidates_table(r, fmt, top), ""])
    if r.extra.get("risk"):
        first = next(iter(r.extra["risk"].values()))
        title = (f"Risk by scenarios ({first.scenarios:,} scenarios of MFU, interruptions, delivery, porting and "
                 f"estimated prices; seed {first.seed}; ± = sampling error of the difference to the chosen plan):")
        out += (["## Risk", "", title, "", risk_table(r, fmt, top), ""] if markdown else
                [title, risk_table(r, fmt, top), ""])
    title, table = tco_table(r, fmt, top) if verbose else ("", "")
    if table:
        out += ["## Total cost over the horizon", "", title, "", table, ""] if markdown else [title, table, ""]
    if r.explanation:
        text = render_explanation(r.explanation, verbose=verbose)
        out += (["## Why there is no plan", "", "```", text, "```", ""] if markdown else [text, ""])
    if r.excluded:
        table = excluded_table(r, modes, fmt, verbose)
        out += (["## Options that cannot work", "", table, ""] if markdown else
                ["Options that cannot work:", table, ""])
    return "\n".join(out).rstrip() + "\n"


def _plan_brief(p: dict[str, Any] | None) -> str:
    if not p:
        return ""
    offer = OFFER_NAME.get(p.get("offer") or p["mode"], p.get("offer") or p["mode"])
    return (f"{p['accelerator']} {offer} {plural(p['nodes'], 'node')} ({p['gpus']} GPUs), cost "
            f"{usd(p['cost_usd'])}, finish {p['finish']}")


def fmt_value(v: Any, unit: str) -> str:
    if unit == "usd" and isinstance(v, (int, float)):
        return exact_usd(v)
    if isinstance(v, float):
        return f"{v:,.0f}" if v.is_integer() else f"{v:,.6g}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _change(r: dict[str, Any]) -> str:
    """The size of a relaxation in its own unit: +$52,000, +4 days, +12 kW."""
    frm, to, unit = r["from"], r["to"], r["unit"]
    if unit == "day":
        days = (date.fromisoformat(to) - date.fromisoformat(frm)).days
        return f"{'+' if days >= 0 else '-'}{plural(abs(days), 'day')}"
    delta = to - frm
    sign = "+" if delta >= 0 else "-"
    if unit == "usd":
        return f"{sign}{exact_usd(abs(delta))}"
    return f"{sign}{fmt_value(abs(delta), unit)} {unit}" + ("s" if unit in ("rack", "node") and abs(delta) != 1 else "")


def _conflict_lines(expl: dict[str, Any], verbose: bool) -> list[str]:
    detail = expl.get("conflict_detail", [])
    caps = [c for c in detail if c["group"].startswith("quotes.") and c["group"].endswith(".max_nodes")]
    rows = [[c["group"], c["text"], c["where"]] for c in detail if c not in caps or verbose or len(caps) == 1]
    if len(caps) > 1 and not verbose:
        ids = [c["group"][len("quotes."):-len(".max_nodes")] for c in caps]
        shown = ", ".join(ids[:MAX_LISTED]) + (f", … {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else "")
        rows.append(["quotes.*.max_nodes", f"capacity of {plural(len(ids), 'quote')}: {shown}",
                     "catalog quotes (--verbose lists each)"])
    return ["  " + line for line in tabulate(rows, tablefmt="plain").splitlines()]


def render_explanation(expl: dict[str, Any], verbose: bool = False) -> str:
    """An explanation: the cause, the minimal conflict, the fixes (smallest change first), other ways out."""
    lines = ["NO PLAN satisfies all constraints." if not expl.get("subject") else
             f"{expl['subject']} cannot be part of any plan."]
    if expl.get("cause"):
        lines.append(f"Cause: {expl['cause']}.")
    causes = expl.get("causes") or []
    deadline = next((c["text"] for c in expl.get("conflict_detail", []) if c["group"] == "schedule.deadline"), None)
    if causes and deadline:
        first = causes[0]
        lines.append(f"Cause: the earliest any option can finish is {first['fastest_finish']} "
                     f"({first['pair']}, {plural(first['nodes'], 'node')}, capacity ready from {first['ready']}); "
                     f"the problem asks to {deadline}.")
    if expl.get("conflict"):
        proven = expl.get("proven", True)
        stopped = expl.get("stopped_by")
        lines.append("Conflict (minimal: dropping any one of these makes the rest feasible):" if proven else
                     f"Conflict (NOT proven minimal: {stopped} stopped the search before it was shrunk; the smallest "
                     "changes were not searched either, and the answer may change with more time):" if stopped else
                     "Conflict (NOT proven minimal: the time limit stopped the search; raise --time-limit):")
        lines += _conflict_lines(expl, verbose)
        if proven and stopped:
            lines.append(f"{stopped} stopped the search for ways out: the changes below are those it found before, "
                         "and more time may find others.")
    if expl.get("relaxations"):
        lines.append("Smallest single changes that restore feasibility (everything else held; smallest first):")
        rows = [[r["group"], f"{fmt_value(r['from'], r['unit'])} -> {fmt_value(r['to'], r['unit'])}", f"({_change(r)})",
                 _plan_brief(r.get("plan")) + ("" if r.get("proven", True) else "  [not proven: time limit]")]
                for r in expl["relaxations"]]
        lines += ["  " + line for line in tabulate(rows, tablefmt="plain").splitlines()]
        if expl.get("quotes_not_relaxed"):
            lines.append(f"  (the capacity of {plural(expl['quotes_not_relaxed'], 'more quote')} in the conflict is "
                         "not relaxed one by one: only that of the quotes with the most capacity)")
    drops = [a for a in expl.get("alternatives", []) if "relax" not in a]
    if drops:
        lines.append("Other ways out (dropping these constraints):")
        for a in drops:
            unproven = " (the cheapest such plan is not proven: time limit)" if a.get("cheapest_not_proven") else ""
            lines.append(f"  drop {' + '.join(a['drop']):<29} -> {_plan_brief(a.get('plan'))}{unproven}")
    comb = expl.get("combined")
    if comb:
        lines.append("Cheapest combined relaxation (smallest total relative change, then cost):")
        for c in comb["changes"]:
            lines.append(f"  {c['group']:<34} {fmt_value(c['from'], c['unit']):>14} -> {fmt_value(c['to'], c['unit'])}")
        lines.append(f"  -> {_plan_brief(comb.get('plan'))}")
    if not expl.get("relaxations") and not drops and not comb and expl.get("conflict") and \
            not expl.get("quotes_not_relaxed") and not expl.get("stopped_by"):
        lines.append("No single change of these constraints restores feasibility.")
    if causes and deadline:
        lines.append("Earliest finish per option (lead times, memory, site and policy; budget and rules aside):")
        rows = [[c["pair"], c["option"].split("/")[0], plural(c["nodes"], "node"), c["ready"], c["fastest_finish"]]
                for c in causes]
        lines += ["  " + x for x in tabulate(rows, headers=["accelerator/mode", "system", "nodes", "capacity ready",
                                                              "fastest finish"], tablefmt="simple").splitlines()]
    return clean("\n".join(lines))


def render_why_not(out: dict[str, Any], verbose: bool = False) -> str:
    t = out["target"]
    st = out["status"]
    if st == "excluded":
        return clean(f"{t}: cannot be chosen.\n" + "".join(f"  - {r}\n" for r in out["reasons"]))
    if st == "unpriced":
        fake = Result(status="optimal", plan=None, alternatives=(), excluded=(), objective=None, bound=None,
                      solve_seconds=0.0, warnings=(), problem_name="", as_of=date.today(), as_of_defaulted=False,
                      unit=1, extra={"unpriced": out.get("break_evens") or [out["break_even"]]})
        return clean(f"{t} has no price yet; the price at which it would become the plan:\n"
                     + "".join(f"  {x}\n" for x in unpriced_lines(fake)))
    if st == "infeasible":
        return render_explanation(out["explanation"], verbose) + "\n"
    p: Any = out.get("plan")
    c: Any = out.get("chosen")
    if st == "unknown":
        return clean(f"{t} can work, but the search for its best plan hit the time limit before finding one; "
                     "try a larger --time-limit.\n")
    if st == "feasible":
        return clean(f"{t} can work: its best plan is {p.option} x{p.nodes} at {usd(p.total_cost)}; the problem "
                     "has no proven plan to compare it with.\n")
    if st == "chosen":
        return clean(f"{t} is part of the chosen plan: {p.option} x{p.nodes} at {usd(p.total_cost)}.\n")
    lines = [f"{t} can work but costs more: its best plan is {p.option} x{p.nodes} ({p.gpus} GPUs) at "
             f"{usd(p.total_cost)}, finishing {p.finish}; the chosen plan is {c.option} x{c.nodes} at "
             f"{usd(c.total_cost)} ({'+' if out['delta_usd'] >= 0 else ''}{usd(out['delta_usd'])}).", ""]
    rows = [[LINE_LABEL.get(r["line"], r["line"]), usd(r["target"]), usd(r["chosen"]),
             ("+" if r["delta"] >= 0 else "") + usd(r["delta"])] for r in out["lines"]]
    lines.append(tabulate(rows, headers=["line", t, "chosen", "delta"], tablefmt="simple",
                          colalign=("left", "right", "right", "right")))
    be = out.get("break_even")
    if be:
        lines.append("")
        if be.get("price") is None:
            lines.append(f"Break-even: {be['note']} (quote {be['quote']}).")
        else:
            lines.append(f"Break-even: quote {be['quote']} would win at {be['price']:,.2f} {be['unit']} or less "
                         f"(today {be['current']:,.2f}).")
    return clean("\n".join(lines) + "\n")


