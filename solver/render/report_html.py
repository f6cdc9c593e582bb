"""`plan report FILE -o report.html`: one self-contained HTML page to forward to finance or leadership.

It reads a `Dossier` (`answers/dossier.py`: the solve with its explanations, the chosen plan's risk, the time–cost
frontier, cash by quarter, sources) by attribute and writes the page: the decision in one sentence, the chosen plan
(quotes at their prices, dates, cost against cash), a cost waterfall, cash by quarter, the risk histograms and
tornado, the frontier, the alternatives, why the other options cannot work (with the file:line of each limit), and
the sources and assumptions behind it. Nothing is fetched when the page is opened: the CSS is inline and the charts
are inline SVG (`svg.py`). Every user or catalog string is escaped (`svg.esc`); no timestamp but `as_of`, no random
id, so the same inputs give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date, timedelta
from typing import Any

from ..answers.dossier import Dossier, QuarterCash
from ..estimate.cost import RISK_LINES
from ..inputs.units import usd
from ..solve.plan import ExcludedOption, Plan, PlanQuote, Result, billed_months
from . import svg
from .brief import OFFER_NAME, offer_name
from .jsonout import provider
from .svg import esc
from .text import AFTER_RUN_TEXT, LINE_LABEL, fmt_value, plural

CSS = """
:root { --ink: #1d2330; --muted: #5b6474; --line: #d8dde6; --accent: #2456a6; --good: #2f8f5b; --bad: #c0392b;
  --bar: #6f8fc9; --neg: #59a27a; --late: #d9835f; --paper: #ffffff; --soft: #f4f6fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--soft); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 40px; background: var(--paper); }
header h1 { font-size: 26px; margin: 0 0 4px; }
.meta { color: var(--muted); margin: 0; }
h2 { font-size: 19px; margin: 30px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; }
.decision { font-size: 18px; line-height: 1.45; padding: 14px 18px; border-left: 5px solid var(--accent);
  background: #eef3fb; margin: 16px 0 10px; }
.status-bad { border-left-color: var(--bad); background: #fbeeee; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 8px 18px; margin: 10px 0;
  padding: 0; list-style: none; }
.facts li { padding: 8px 10px; background: var(--soft); border-radius: 4px; }
.facts b { display: block; font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase;
  letter-spacing: .03em; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 4px; font-size: 13.5px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
tr.chosen td { background: #eef3fb; font-weight: 600; }
tr.total td { font-weight: 700; border-top: 2px solid var(--ink); }
.note { color: var(--muted); font-size: 13px; margin: 4px 0; }
.warn { color: #8a4b00; }
.nw { white-space: nowrap; }
.sub { display: block; color: var(--muted); font-size: 12px; }
.wide { overflow-x: auto; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
ul.reasons { margin: 0; padding-left: 16px; }
svg.chart { width: 100%; height: auto; display: block; margin: 6px 0; }
svg .lbl { font-size: 12px; fill: var(--ink); }
svg .val { font-size: 12px; fill: var(--ink); font-variant-numeric: tabular-nums; }
svg .small { font-size: 10.5px; }
svg .strong { font-weight: 700; }
svg .mark { fill: var(--bad); font-size: 11px; }
svg .axis { stroke: #8a93a3; stroke-width: 1; }
svg .link { stroke: #8a93a3; stroke-width: 1; }
svg .marker { stroke: var(--bad); stroke-width: 1.5; stroke-dasharray: 5 4; }
svg .bar { fill: var(--bar); }
svg .bar.neg, svg .bar.good { fill: var(--neg); }
svg .bar.total { fill: var(--accent); }
svg .bar.late, svg .bar.bad { fill: var(--late); }
svg .bar.hw { fill: #8e7cc3; }
svg .step { fill: none; stroke: #9aa3b2; stroke-width: 1.5; }
svg .dot { fill: var(--bar); stroke: #fff; stroke-width: 1; }
svg .dot.muted { fill: #b7bdc8; }
svg .dot.chosen { fill: var(--accent); stroke: var(--bad); stroke-width: 3; }
footer { margin-top: 34px; padding-top: 10px; border-top: 1px solid var(--line); color: var(--muted);
  font-size: 12.5px; }
@media (max-width: 760px) { main { padding: 14px; } }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { background: #fff; font-size: 9.5pt; }
  main { max-width: none; padding: 0; }
  h2 { font-size: 13pt; margin-top: 16pt; break-after: avoid; page-break-after: avoid; }
  h3 { break-after: avoid; page-break-after: avoid; }
  table { font-size: 8pt; }
  th, td { padding: 2.5pt 4pt; }
  .wide { overflow: visible; }
  .facts { grid-template-columns: repeat(3, 1fr); }
  tr, svg.chart, .decision, .facts li, .note { break-inside: avoid; page-break-inside: avoid; }
  tr.chosen td, .decision, .facts li, svg.chart { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""

VERB = {"buy": ("Buy", ""), "cloud": ("Rent", " on demand"), "cloud-reserved": ("Reserve", ""),
        "cloud-spot": ("Rent", " as spot capacity"), "managed": ("Contract", " as a managed system")}
"""How the decision sentence says what to do, by the plan's offer: the verb before the nodes, the words after."""


def render_report(d: Dossier) -> str:
    """The whole page (module docstring)."""
    r = d.result
    parts = [_header(d)]
    if r.plan is not None:
        parts += [_decision(d, r.plan), _chosen(d, r.plan), _waterfall(r.plan), _cash(d), _risk(d), _frontier(d),
                  _alternatives(r)]
    else:
        parts += [_no_plan(r)]
    parts += [_unpriced(r), _cannot_work(r), _sources(d), _footer(d)]
    title = f"Plan report: {d.problem.spec.name} (as of {d.problem.as_of})"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(p for p in parts if p) + "\n</main>\n</body>\n</html>\n")


# ---------------------------------------------------------------------------------------------- small helpers

def _pct(p: float | None, digits: int = 0) -> str:
    return "—" if p is None else f"{p * 100:.{digits}f}%"


def _exact(x: float) -> str:
    return f"-${abs(x):,.0f}" if round(x) < 0 else f"${x:,.0f}"


def _signed(x: float) -> str:
    return ("+" if x >= 0 else "-") + usd(abs(x))


def _d(day: object) -> str:
    """A date (or "—") kept on one line."""
    return f'<span class="nw">{esc(day)}</span>' if day else "—"


def _sub(text: object) -> str:
    """A second, smaller line in a table cell."""
    return f'<span class="sub">{esc(text)}</span>'


def _days(x: float) -> str:
    return f"{x:,.1f} days"


def price(q: PlanQuote) -> str:
    """A quote's price with its unit: $/GPU-h (cloud), $/node-month (managed), $/node (buy)."""
    if q.mode == "cloud":
        return f"${q.price:,.2f}/GPU-h"
    return f"{usd(q.price)}/node-month" if q.mode == "managed" else f"{usd(q.price)}/node"


def _main_price(p: Plan) -> str:
    return price(max(p.quotes, key=lambda q: (q.nodes, q.id))) if p.quotes else "—"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], num: Sequence[int] = (),
           row_class: Callable[[int], str] | None = None) -> str:
    """A table of cells that are already HTML (escape before); columns in `num` right-aligned."""
    th = "".join(f'<th class="num">{h}</th>' if i in num else f"<th>{h}</th>" for i, h in enumerate(head))
    body = []
    for k, row in enumerate(rows):
        cls = row_class(k) if row_class else ""
        tds = "".join(f'<td class="num">{c}</td>' if i in num else f"<td>{c}</td>" for i, c in enumerate(row))
        body.append(f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>")
    return f'<div class="wide"><table><thead><tr>{th}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _section(ident: str, title: str, *body: str) -> str:
    return f'<section id="{ident}">\n<h2>{esc(title)}</h2>\n' + "\n".join(b for b in body if b) + "\n</section>"


def _stats(r: Result, p: Plan) -> Any:
    return (r.extra.get("risk") or {}).get(p.option)


def _day(d: Dossier, days: float) -> date:
    return d.problem.as_of + timedelta(days=round(days))


def _status(r: Result) -> str:
    return {"optimal": "optimal (proven)", "feasible": "best found (a time limit stopped the search; not proven "
            "optimal)", "infeasible": "no plan satisfies the constraints",
            "unknown": "unknown (a time limit stopped the search before any plan was found)"}.get(r.status, r.status)


# ---------------------------------------------------------------------------------------------- sections

def _header(d: Dossier) -> str:
    spec = d.problem.spec
    desc = f'<p class="meta">{esc(spec.description.strip())}</p>' if spec.description else ""
    return ("<header>\n"
            f"<h1>GPU procurement plan: {esc(spec.name)}</h1>\n"
            f'<p class="meta">As of <b>{d.problem.as_of}</b> · status: {esc(_status(d.result))} · '
            f"plan {esc(d.version)} · problem file <code>{esc(d.problem.file)}</code></p>\n{desc}\n</header>")


def decision_sentence(d: Dossier, p: Plan) -> str:
    """The decision in one sentence: the plan, its cost, its chance of the deadline and why (the escaped HTML)."""
    r = d.result
    st = _stats(r, p)
    deadline = d.problem.spec.schedule.deadline
    verb, how = VERB.get(p.offer or p.mode, ("Get", ""))
    nodes, gpus = plural(p.nodes, p.system + " node"), plural(p.gpus, p.accelerator + " GPU")
    what = f"{verb} <b>{esc(nodes)}</b>{how} ({esc(gpus)}) from {esc(provider(p))} at {esc(_main_price(p))}"
    cost = f"for an expected <b>{usd(p.total_cost)}</b> (cash {usd(p.total_cash)})"
    if deadline is not None and st is not None and st.p_deadline is not None:
        chance = f"with a <b>{_pct(st.p_deadline)} chance</b> to finish by {deadline}"
    else:
        chance = f"finishing {p.finish} as planned (no deadline set)"
    n = 1 + len(r.alternatives)
    why = f"the lowest expected completion cost of the {n:,} plan{'s' if n != 1 else ''} that can work"
    if r.alternatives:
        nxt = r.alternatives[0]
        why += (f", {usd(nxt.delta_usd)} less than the next best ({esc(nxt.plan.accelerator)} "
                f"{esc(offer_name(nxt.plan))}, {plural(nxt.plan.nodes, 'node')})")
    return f"{what}, {cost}, {chance} — {why}."


def _decision(d: Dossier, p: Plan) -> str:
    r = d.result
    st = _stats(r, p)
    facts = []
    pricing = r.extra.get("pricing")
    if st is not None:
        facts.append(("expected completion cost", f"{usd(p.total_cost)} ± {usd(st.objective_std_error)} "
                      f"(sampling error, {st.scenarios:,} scenarios)"))
        if st.p_deadline is not None:
            late = f"{_days(st.late_days_expected)} late expected"
            if pricing is not None and pricing.late_usd_per_day > 0:
                late += f", each late day priced at {usd(pricing.late_usd_per_day)}"
            facts.append(("chance to meet the deadline", f"{_pct(st.p_deadline)}; {late}"))
        facts.append(("finish (scenarios)", f"P50 {_day(d, st.finish_p50)}, P90 {_day(d, st.finish_p90)}"))
    budget = d.problem.spec.budget
    cash = f"{usd(p.total_cash)}" + (f" of a {usd(budget.max_usd)} budget ({esc(budget.applies_to)})"
                                     if budget.max_usd else " (no budget set)")
    facts.append(("cash (what is paid)", cash))
    steps = r.extra.get("steps") or ()
    if steps:
        more = "; ".join(f"{s.target:.0%}: +{usd(s.delta_usd)} ({plural(s.plan.nodes, 'node')} of "
                         f"{esc(s.plan.accelerator)} {esc(offer_name(s.plan))}, {_pct(s.p_deadline, 1)})"
                         for s in steps)
        facts.append(("more certainty costs", more))
    items = "".join(f"<li><b>{esc(k)}</b>{v}</li>" for k, v in facts)
    how = ("chosen and proven optimal by CP-SAT" if r.status == "optimal" else
           "the best found before a time limit stopped the search (not proven optimal)")
    why = ("Why this plan: every option that can work was priced over the same scenarios of what can go wrong "
           "(throughput, interruptions, delivery, porting, estimated prices); the plan with the lowest expected "
           f"completion cost, lateness included, was {how}, then re-checked by an independent checker.")
    cls = "decision" if r.status == "optimal" else "decision status-bad"
    return _section("decision", "Decision", f'<p class="{cls}">{decision_sentence(d, p)}</p>',
                    f'<ul class="facts">{items}</ul>', f'<p class="note">{esc(why)}</p>')


def _quote_row(p: Plan, q: PlanQuote) -> list[str]:
    if q.mode == "buy":
        terms = f"bought; delivered {q.delivered}" + (f", waits {q.wait_days:,} days" if q.wait_days else "")
    else:
        contract = (q.contract or "on_demand").replace("_", "-")
        billed = billed_months(q, p.training_days * 24.0)
        terms = contract + (f", committed {q.commit_months:g} months" if q.commit_months else "") + \
            f", billed {billed:.1f} months"
        if q.max_term_months is not None:
            terms += f"; term up to {q.max_term_months:.1f} months, then ${q.after_term_rate:,.2f}/GPU-h"
    return [f"<code>{esc(q.id)}</code>", esc(q.vendor), f"{q.nodes:,}", esc(price(q)), esc(q.kind), esc(terms),
            _d(q.ordered), _d(q.ready), _d(q.valid_until), _days(q.expected_slip_days)]


def _chosen(d: Dossier, p: Plan) -> str:
    r = d.result
    deadline = d.problem.spec.schedule.deadline
    facts = [("accelerator · system · offer", f"{esc(p.accelerator)} · {esc(p.system)} · {esc(offer_name(p))}"),
             ("nodes", f"{plural(p.nodes, 'node')} = {plural(p.gpus, 'GPU')}"),
             ("planned schedule", f"{p.start} → {p.finish} ({_days(p.training_days)} of training)"),
             ("deadline", str(deadline) if deadline else "none set"),
             ("memory per GPU", f"{p.memory_required_gb:,.1f} GB of {p.memory_available_gb:,.0f} GB"),
             ("power", f"{p.power_kw:,.0f} kW IT" + (f" in {p.racks:,} racks" if p.racks is not None else ""))]
    if p.mode == "buy":
        facts.append(("after the run", esc(AFTER_RUN_TEXT.get(p.after_run, p.after_run))))
    items = "".join(f"<li><b>{esc(k)}</b>{v}</li>" for k, v in facts)
    quotes = _table(["quote", "provider", "nodes", "price", "kind", "terms", "ordered", "ready", "valid until",
                     "expected slip"], [_quote_row(p, q) for q in p.quotes], num=(2, 3, 9))
    rows = []
    for name, v in p.lines.cost.items():
        cash = p.lines.cash.get(name)
        if abs(v) < 0.5 and not cash:
            continue
        rows.append([esc(LINE_LABEL.get(name, name)), _exact(v),
                     _exact(cash) if cash is not None and name not in RISK_LINES else "—"])
    rows.append(["total", _exact(p.total_cost), _exact(p.total_cash)])
    lines = _table(["line", "cost (what this run consumes)", "cash (what is paid)"], rows, num=(1, 2),
                   row_class=lambda k: "total" if k == len(rows) - 1 else "")
    warnings = list(p.warnings) + [w for w in r.warnings if w not in p.warnings]
    warn = ("<h3>Warnings</h3><ul>" + "".join(f'<li class="warn">{esc(w)}</li>' for w in warnings) + "</ul>"
            if warnings else "")
    note = ("Cost is what this run consumes (the objective, risk premiums included); cash is what is paid or "
            "committed (what a cash budget limits). Quotes are scheduled at their P90 lead time.")
    return _section("plan", "The chosen plan", f'<ul class="facts">{items}</ul>', "<h3>Quotes</h3>", quotes,
                    "<h3>Cost and cash, line by line</h3>", lines, f'<p class="note">{esc(note)}</p>', warn)


def _waterfall(p: Plan) -> str:
    steps = [(LINE_LABEL.get(n, n), v) for n, v in p.lines.cost.items() if abs(v) >= 0.5]
    chart = svg.waterfall(steps, ("total cost", p.total_cost), usd, "Cost waterfall of the chosen plan")
    return _section("waterfall", "Cost waterfall", chart,
                    '<p class="note">Each bar adds one cost line of the chosen plan to the running total (a credit, '
                    "such as resale after the run, runs left); the last bar is the expected completion cost.</p>")


def _cash(d: Dossier) -> str:
    quarters: Sequence[QuarterCash] | None = d.quarters
    if not quarters:
        return _section("cash", "Cash by quarter", '<p class="note">Cash by quarter is not available for this '
                        "plan: its cash lines cannot be placed in time.</p>")
    bars = [(q.quarter, q.usd, "hw" if q.hardware_usd > 0.5 * q.usd else "") for q in quarters]
    legend = "; purple: mostly bought hardware (deposits, balances)" if any(c == "hw" for _q, _v, c in bars) else ""
    chart = svg.columns(bars, usd, "Cash paid by calendar quarter", axis_label="cash per quarter ($)" + legend)
    rows = [[q.quarter, _exact(q.usd), _exact(q.hardware_usd) if q.hardware_usd else "—"] for q in quarters]
    total = sum(q.usd for q in quarters)
    hardware = sum(q.hardware_usd for q in quarters)
    rows.append(["total", _exact(total), _exact(hardware) if hardware else "—"])
    table = _table(["quarter", "cash", "of which bought hardware"], rows, num=(1, 2),
                   row_class=lambda k: "total" if k == len(rows) - 1 else "")
    note = ("The plan's payments as they fall: bought hardware is paid a deposit at order and the balance the "
            "payment terms' days after delivery (money.deposit_pct, money.payment_terms_days); rented capacity is "
            "billed at the start of each month of its billed term (a reservation's whole term); support and the hall "
            "monthly from delivery; porting and rules at the start; every other cash line monthly over the run. "
            "The quarters add up to the plan's cash.")
    return _section("cash", "Cash by quarter", chart, table, f'<p class="note">{esc(note)}</p>')


def _finish_chart(d: Dossier) -> str:
    rep = d.risk
    assert rep is not None
    bins = rep.finish_bins
    dl = rep.deadline_day
    bars = [(str(_day(d, a)), share * 100, "late" if dl is not None and (a + b) / 2 > dl else "")
            for a, b, share in bins]
    marker = None
    lo, hi = bins[0][0], bins[-1][1]
    if dl is not None and hi > lo and lo <= dl <= hi:
        marker = ((dl - lo) / (hi - lo) * len(bins), f"deadline {_day(d, dl)}")
    late = "; orange: after the deadline" if dl is not None else ""
    return svg.columns(bars, lambda v: f"{v:.1f}%", "Finish date over the scenarios", marker,
                       f"share of scenarios (%) by finish date (bin start){late}")


def _cost_chart(d: Dossier) -> str:
    rep = d.risk
    assert rep is not None
    bars = [(usd(a), share * 100, "") for a, _b, share in rep.cost_bins]
    return svg.columns(bars, lambda v: f"{v:.1f}%", "Completion cost over the scenarios", None,
                       "share of scenarios (%) by completion cost (bin start, $)")


def _tornados(d: Dossier) -> list[str]:
    rep = d.risk
    assert rep is not None
    st = rep.stats
    out = []
    if st.p_deadline is not None and all(None not in sw.p_deadline for sw in rep.swings):
        rows = [(sw.label, 100 * sw.p_deadline[0], 100 * sw.p_deadline[1]) for sw in rep.swings]  # type: ignore
        out.append(svg.tornado(rows, 100 * st.p_deadline, lambda v: f"{v:.1f}%",
                               "What moves the chance of the deadline", "P(deadline)"))
    rows_c = [(sw.label, sw.cost_expected[0], sw.cost_expected[1]) for sw in rep.swings]
    out.append(svg.tornado(rows_c, st.cost_expected, usd, "What moves the expected cost", "expected"))
    return out


def _risk(d: Dossier) -> str:
    rep = d.risk
    if rep is None:
        return ""
    st = rep.stats
    head = (f"{st.scenarios:,} scenarios (seed {st.seed}) of achieved MFU, interruptions, delivery lead times, "
            f"porting and estimated prices. Finish P50 {_day(d, st.finish_p50)}, P80 {_day(d, st.finish_p80)}, P90 "
            f"{_day(d, st.finish_p90)}; expected cost {usd(st.cost_expected)}, P90 {usd(st.cost_p90)}, CVaR95 "
            f"{usd(st.cvar95)} (the mean of the worst 5%).")
    if st.p_deadline is not None:
        head += f" Chance to meet the deadline: {_pct(st.p_deadline, 1)}, {_days(st.late_days_expected)} late expected."
    rows = [[esc(sw.label), " / ".join(_pct(x, 1) for x in sw.p_deadline),
             f"{usd(sw.cost_expected[0])} / {usd(sw.cost_expected[1])}"] for sw in rep.swings]
    table = _table(["uncertainty", "P(deadline): favourable / unfavourable", "expected cost: favourable / "
                    "unfavourable"], rows, num=(1, 2))
    tornado_note = ("Tornado: each uncertainty held at its favourable and unfavourable 10% decile (its P10 and P90), "
                    "the others random; green is the favourable side, orange the unfavourable, from the plan's own "
                    "figure. The same figures as <code>plan risk</code>.")
    charts = f"<h3>When it finishes</h3>{_finish_chart(d)}<h3>What it costs</h3>{_cost_chart(d)}"
    return _section("risk", "Risk", f"<p>{esc(head)}</p>", charts, "<h3>What moves it</h3>",
                    "".join(_tornados(d)), table,
                    f'<p class="note">{tornado_note}</p>')


def _frontier(d: Dossier) -> str:
    pts = d.frontier
    if not pts:
        return _section("frontier", "Time–cost frontier",
                        '<p class="note">No frontier point was found (no plan at any finish date).</p>')
    as_of = d.problem.as_of
    deadline = d.problem.spec.schedule.deadline
    dots = [svg.Dot(float((pt.finish - as_of).days), pt.cost,
                    f"chosen: {plural(pt.plan.nodes, 'node')}, {_pct(pt.p_deadline)}" if pt.chosen
                    else _pct(pt.p_deadline),
                    pt.chosen, not pt.within_deadline) for pt in pts]
    marker = (float((deadline - as_of).days), f"deadline {deadline}") if deadline else None
    chart = svg.scatter(dots, lambda x: str(as_of + timedelta(days=round(x))), usd,
                        "Time–cost frontier: expected cost by finish date", marker)
    rows = []
    for pt in pts:
        p = pt.plan
        note = "chosen" if pt.chosen else ("after the deadline" if not pt.within_deadline else "")
        note += "" if pt.proven else (", " if note else "") + "not proven"
        rows.append([_d(p.finish), _pct(pt.p_deadline), usd(p.total_cost), usd(p.total_cash),
                     f"{esc(p.accelerator)} {esc(offer_name(p))}", esc(provider(p)),
                     f"{p.nodes:,}" + _sub(f"{p.gpus:,} GPUs"), _d(p.start), esc(note)])
    table = _table(["finish (planned)", "P(deadline)", "expected cost", "cash", "plan", "provider", "nodes", "start",
                    "note"], rows, num=(1, 2, 3, 6),
                   row_class=lambda k: "chosen" if pts[k].chosen else "")
    note = ("Each point is the plan with the lowest expected completion cost that finishes by its date as planned, "
            "proven optimal for that date (every other limit kept); P(deadline) is its chance of finishing by your "
            "deadline over the scenarios. The same points as <code>plan frontier</code>.")
    return _section("frontier", "Time–cost frontier", chart, table, f'<p class="note">{note}</p>')


def _alternatives(r: Result) -> str:
    p = r.plan
    if p is None:
        return ""
    entries = [(p, None, 0.0)] + [(a.plan, a.delta_usd, a.settled_usd) for a in r.alternatives]
    rows = []
    for q, delta, settled in entries:
        st = _stats(r, q)
        est = " *" if any(x.kind == "estimate" for x in q.quotes) else ""
        late = "" if st is None or st.p_deadline is None else _sub(f"{_days(st.late_days_expected)} late")
        rows.append(["chosen" if delta is None else "", esc(q.accelerator) + _sub(q.system), esc(offer_name(q)),
                     esc(provider(q)), f"{q.nodes:,}", esc(_main_price(q)) + est,
                     usd(q.total_cost) + (" ~" if settled else "") + ("" if delta is None else _sub(_signed(delta))),
                     usd(q.total_cash), _pct(st.p_deadline if st else None) + late,
                     "—" if st is None else _d(r.as_of + timedelta(days=st.finish_p90))])
    table = _table(["", "accelerator · system", "offer", "provider", "nodes", "price", "expected cost · delta",
                    "cash", "P(deadline) · lateness", "finish P90"], rows, num=(4, 5, 6, 7, 8),
                   row_class=lambda k: "chosen" if k == 0 else "")
    note = ("The best plan of each other accelerator and offer (buy, on demand, reserved, spot, managed), cheapest "
            "first. * rests on an estimated price; ~ searched to within 5% of its best (it cannot rank first or "
            "second).")
    return _section("alternatives", "Alternatives", table, f'<p class="note">{esc(note)}</p>')


def _reasons(e: ExcludedOption) -> str:
    items = []
    for x in e.reasons:
        where = f" <code>{esc(x.where)}</code>" if x.where else ""
        group = f"<code>{esc(x.group)}</code> — " if x.group else ""
        items.append(f"<li>{group}{esc(x.text)}{where}</li>")
    tail = "" if e.proven else '<li class="warn">not proven minimal: a time limit stopped the search</li>'
    return f'<ul class="reasons">{"".join(items)}{tail}</ul>'


def _cannot_work(r: Result) -> str:
    if not r.excluded:
        return ""
    rows = [[f"<b>{esc(e.accelerator)}</b>" + _sub(OFFER_NAME.get(e.mode, e.mode) if e.mode else "every offer")
             + (_sub(f"system {e.system}") if e.system else ""), _reasons(e)] for e in r.excluded]
    table = _table(["option", "why it cannot work: a minimal set of your constraints (drop any one and it could), "
                    "with where each is stated"], rows)
    return _section("cannot-work", f"Why the other options cannot work ({len(r.excluded):,})", table)


def _unpriced(r: Result) -> str:
    items = r.extra.get("unpriced") or []
    if not items:
        return ""
    rows = []
    for be in items:
        if be.get("price") is not None:
            unit = str(be.get("unit", "")).replace("usd per ", "/").replace("GPU-hour", "GPU-h")
            money = f"${be['price']:,.2f}{unit}" if be.get("mode") == "cloud" else f"{usd(be['price'])}{unit}"
            what = f"becomes the plan at {money} or less"
        else:
            what = "no price makes it the plan" + (": " + ", ".join(be["reasons"]) if be.get("reasons") else "")
        rows.append([f"<code>{esc(be['quote'])}</code>", esc(be.get("system", "")), esc(be.get("mode", "")),
                     _d(be.get("ready")), esc(what)])
    return _section("unpriced", "Hardware without a price yet",
                    _table(["quote", "system", "mode", "ready", "break-even price"], rows))


def _no_plan(r: Result) -> str:
    expl = r.explanation or {}
    head = "No plan satisfies all constraints." if r.status == "infeasible" else f"No plan: {_status(r)}."
    parts = [f'<p class="decision status-bad">{esc(head)}</p>']
    if expl.get("cause"):
        parts.append(f"<p>Cause: {esc(expl['cause'])}.</p>")
    detail = expl.get("conflict_detail") or []
    if detail:
        parts += ["<h3>Minimal conflict (dropping any one of these makes the rest feasible)</h3>",
                  _table(["constraint", "what it says", "where"],
                         [[f"<code>{esc(c['group'])}</code>", esc(c["text"]), f"<code>{esc(c['where'])}</code>"]
                          for c in detail])]
    relax = expl.get("relaxations") or []
    if relax:
        parts += ["<h3>Smallest single changes that restore feasibility</h3>",
                  _table(["constraint", "from", "to", "then the plan"],
                         [[f"<code>{esc(x['group'])}</code>", esc(fmt_value(x["from"], x.get("unit", ""))),
                           esc(fmt_value(x["to"], x.get("unit", ""))), _relaxed_plan(x.get("plan"))]
                          for x in relax])]
    return _section("decision", "Decision", *parts)


def _relaxed_plan(p: dict[str, Any] | None) -> str:
    if not p:
        return "—"
    offer = str(p.get("option", "")).rpartition("/")[2] or p.get("mode", "")
    return esc(f"{p.get('accelerator')} {OFFER_NAME.get(offer, offer)}, {plural(int(p.get('nodes', 0)), 'node')}, cost "
               f"{usd(float(p.get('cost_usd') or 0))}, finish {p.get('finish')}")


def _sources(d: Dossier) -> str:
    parts = []
    if d.citations:
        rows = []
        for c in d.citations:
            e = c.entry
            title = esc(e.title) if e else "(not in the bibliography)"
            url = f"<br><code>{esc(e.url)}</code>" if e and e.url else ""
            when = esc(f"published {e.published}, accessed {e.accessed}") if e else ""
            rows.append([f"<code>[{esc(c.id)}]</code>", title + url, when,
                         ", ".join(f"<code>{esc(q)}</code>" for q in c.quotes)])
        parts += ["<h3>Sources cited by the chosen plan's quotes</h3>",
                  _table(["id", "source", "dates", "cited by"], rows)]
    if d.overrides:
        parts += ["<h3>Assumptions this problem overrides</h3>",
                  _table(["assumption", "value here", "bundled value", "where"],
                         [[f"<code>{esc(o.path)}</code>", esc(assumption_value(o.path, o.value)),
                           esc(assumption_value(o.path, o.default)), f"<code>{esc(o.where)}</code>"]
                          for o in d.overrides], num=(1, 2))]
    else:
        parts.append('<p class="note">No assumption is overridden: every figure is the bundled catalog\'s '
                     "(<code>catalogs/assumptions.yaml</code>, each with its source).</p>")
    parts.append(f"<ul>{''.join(f'<li>{x}</li>' for x in _inputs(d))}</ul>")
    return _section("sources", "Sources and assumptions", *parts)


def assumption_value(path: str, value: object) -> str:
    """An assumption's value with its unit when its name says it: dollars (`usd`), percent (`pct`), days."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "—" if value is None else str(value)
    name = path.rsplit(".", 1)[-1]
    if "usd" in name:
        return f"${value:,.2f}" if abs(value) < 100 and value != int(value) else f"${value:,.0f}"
    text = f"{value:,.0f}" if value == int(value) else f"{value:,.4g}"
    if "pct" in name:
        return text + "%"
    return text + (" days" if name.endswith("days") else "")


def _inputs(d: Dossier) -> list[str]:
    pr = d.problem
    out = [f"problem file <code>{esc(pr.file)}</code>, as of {pr.as_of}"
           + (" (not set in the file: today)" if pr.as_of_defaulted else "")]
    if pr.sets:
        out.append("what-if values: " + ", ".join(f"<code>--set {esc(s)}</code>" for s in pr.sets))
    if pr.quote_files:
        out.append("quote files: " + ", ".join(f"<code>{esc(f)}</code>" for f in pr.quote_files))
    st = d.risk.stats if d.risk is not None else None
    if st is not None:
        out.append(f"risk: {st.scenarios:,} scenarios, seed {st.seed} (<code>risk.uncertainty</code>)")
    pricing = d.result.extra.get("pricing")
    if pricing is not None:
        out.append(f"a late day priced at {usd(pricing.late_usd_per_day)}; CVaR weight {pricing.cvar_weight:g}")
    out.append("every other figure: the bundled catalogs and <code>catalogs/assumptions.yaml</code>; "
               "<code>plan catalog sources</code> resolves every citation")
    return out


def _footer(d: Dossier) -> str:
    pr = d.problem
    cmd = f"plan solve {pr.file}" + "".join(f" --set {s}" for s in pr.sets) + \
        "".join(f" --quotes {f}" for f in pr.quote_files)
    return ("<footer>\n"
            f"<p>Planned as of {pr.as_of} by <b>plan {esc(d.version)}</b>. Money in US dollars ($; $/GPU-h per "
            "GPU-hour, $/node per server, $/node-month per managed node); durations in days; chances in % of "
            "scenarios.</p>\n"
            f"<p>The same answer at a terminal: <code>{esc(cmd)}</code> (and <code>plan risk</code>, "
            "<code>plan frontier</code> with the same arguments).</p>\n</footer>")


__all__ = ["render_report", "decision_sentence", "price"]
