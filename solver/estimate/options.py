"""Estimates per option: every (system, mode) the catalog offers, at every candidate node count.

An *option* is a system bought, rented or contracted (e.g. `dgx-b200/buy`), with the quotes that offer it.
A *point* is an option at n nodes: memory per GPU, wall time, power, racks and cost lines, all computed here
by the pure estimators so that the CP-SAT model only selects among constants (a one-hot over points with
linear side constraints). Options that cannot be modelled at all (no quote, every quote expired, buying without
a site) are returned as static exclusions with their reason.

Everything here is a pure function of a `Problem`: the universe and its points are never changed after they are
built, and later stages keep what they derive from them in their own structures.

This module builds the universe (`build_universe`) and prices its points: the per-node line templates behind
`PerNode` and the per-plan lines. The data classes are in universe.py, readiness days and the calendar horizon in
readiness.py, memory and time estimates in point_estimates.py; their names are re-exported here, so callers import
them from this module. The cost formulas are called through this module's names (`cloud_node_lines`,
`buy_node_terms`), which tests replace to plant a bug the checker must catch.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import collect
from ..inputs.assumptions import Assumptions, Porting
from ..inputs.catalog import Accelerator, Quote, System
from ..inputs.problem import Problem
from ..inputs.rules import adjustments, option_attrs
from ..inputs.spec import ProblemSpec
from .checkpoints import RunData, data_cost, provider_class, run_data
from .compute import TimeEstimate
from .cost import RISK_LINES, Lines, Owning, Term, Totals, buy_node_terms, cloud_node_lines, \
    deposit_capital_per_dollar, fixed_lines, lines_at, managed_node_lines, rented_per_dollar, spare_fraction
from .memory import Shape, checkpoint_bytes, model_shape
from .payments import deposit_share_days
from .point_estimates import _SHARED as _SHARED
from .point_estimates import SHARED_ESTIMATES, EstimateCache, Estimates, PointEstimator, estimate_point, \
    measured_mfu, shared_estimates, workload_utilisation
from .readiness import _READY as _READY
from .readiness import MAX_READY_CACHED, _option_ready, calendar_horizon, option_quote_ready, quote_ready_day
from .scenarios import RunSampler, Runs, cvar_weight, price_tail_factor, wall_kinks
from .universe import _ComputedOnce as _ComputedOnce
from .universe import Excluded, Option, PerNode, Point, PriceKey, Sums, Universe, price_key


OFFERS = ("buy", "cloud", "cloud-reserved", "cloud-spot", "managed")


def offer_of(q: Quote) -> str:
    """The offer a quote belongs to (see `Option.offer`)."""
    if q.mode == "cloud" and q.term in ("reserved", "spot"):
        return f"cloud-{q.term}"
    return q.mode


def build_universe(problem: Problem, *, allow_expired: bool = False, only_pairs: set[str] | None = None,
                   estimates: EstimateCache | None = None, horizon_floor: int | None = None,
                   only_quotes: frozenset[str] | None = None) -> Universe:
    """All options and their points (see module docstring), sorted by id.

    `only_pairs` limits the work to some accelerator/mode pairs (what-if re-solves of one option); `estimates`
    carries memory and time estimates between builds of problems that differ only in quotes (see `EstimateCache`).
    `horizon_floor`, with `only_pairs`: the horizon of a problem that differs from this one only in quotes of those
    pairs' accelerators (re-priced, or an unpriced one priced). The calendar horizon is a maximum over the usable
    quotes (`calendar_horizon`), so this problem's is the larger of that one and its pairs' own: only the quotes of
    the pairs' accelerators are read — a what-if of one option over a marketplace catalog reads a few thousand
    quotes, not all of them. Such a universe lists expired, early and unpriced quotes, and accelerators without a
    quote, for those accelerators only. `only_quotes`, with `only_pairs` and `horizon_floor`: of those quotes, only
    these (a plan forced to use one quote can use no quote on another fabric: `WhyNot.best_forced`).
    """
    with collect.paused():
        return _build_universe(problem, allow_expired, only_pairs, estimates, horizon_floor, only_quotes)


def _build_universe(problem: Problem, allow_expired: bool, only_pairs: set[str] | None,
                    estimates: EstimateCache | None, horizon_floor: int | None = None,
                    only_quotes: frozenset[str] | None = None) -> Universe:
    spec, cat, a = problem.spec, problem.catalog, problem.assumptions.values
    w = spec.workload
    as_of = problem.as_of
    shape = model_shape(w.params, a.memory, w.layers, w.hidden, w.heads, w.vocab)
    ckpt_bytes = checkpoint_bytes(w.params, w.method, w.optimizer, shape, a.memory, w.lora_rank)
    grid = a.node_grid.counts()
    earliest_day = (problem.earliest_start - as_of).days
    deadline_day = (spec.schedule.deadline - as_of).days if spec.schedule.deadline else None

    by_option: dict[tuple[str, str, str], list[Quote]] = {}
    expired: list[Quote] = []
    early: list[Quote] = []
    unpriced: list[Quote] = []
    accels: set[str] | None = None
    ids: Iterable[str] = cat.quotes
    if only_pairs is not None and horizon_floor is not None:
        accels = {p.partition("/")[0] for p in only_pairs}
        systems = sorted(sid for sid, s in cat.systems.items() if s.accelerator in accels)
        ids = [qid for sid in systems for qid in cat.quote_ids_by_system.get(sid, ())
               if only_quotes is None or qid in only_quotes]
    for qid in sorted(ids):
        q = cat.quotes[qid]
        if q.not_yet_quoted(as_of):
            early.append(q)
        elif q.expired(as_of) and not allow_expired:
            expired.append(q)
        elif not q.priced:
            unpriced.append(q)
        else:
            by_option.setdefault((q.system, q.mode, offer_of(q)), []).append(q)
    usable = [q for qs in by_option.values() for q in qs]
    ready_days = [quote_ready_day(q, cat.accelerators[cat.systems[q.system].accelerator].cls, q.mode, a)
                  for q in usable]
    horizon = calendar_horizon(problem, usable, ready_days)
    if accels is not None and horizon_floor is not None:
        horizon = max(horizon, horizon_floor)

    static: list[Excluded] = []
    quoted_accels = {cat.systems[s].accelerator for (s, _m, _o) in by_option}
    for acc_id in sorted(cat.accelerators if accels is None else accels & set(cat.accelerators)):
        if acc_id not in quoted_accels:
            static.append(Excluded(acc_id, None, None, _unquoted_reason(acc_id, problem, expired, early, unpriced)))

    options: list[Option] = []
    cache: EstimateCache = estimates if estimates is not None else shared_estimates(problem)
    sampler = RunSampler(problem)
    weight = cvar_weight(problem)
    for (sys_id, mode, offer), quotes in sorted(by_option.items()):
        system = cat.systems[sys_id]
        accel = cat.accelerators[system.accelerator]
        if only_pairs is not None and f"{accel.id}/{offer}" not in only_pairs:
            continue
        if mode == "buy" and spec.site is None:
            static.append(Excluded(accel.id, mode, sys_id, "no site: buying hardware needs a `site:` section"))
            continue
        ready_day, ready_reason = _option_ready(accel, problem, a)
        attrs = option_attrs(accelerator=accel.id, system=system.id, vendor=accel.vendor, cls=accel.cls, mode=mode,
                             ecc=bool(accel.ecc.value), cooling=system.cooling, software=accel.software,
                             network=system.network)
        porting = a.porting[accel.software][w.framework]  # type: ignore[index]
        opt = Option(f"{sys_id}/{offer}", system, accel, mode, tuple(quotes), attrs, porting, ready_day,
                     ready_reason, offer)
        opt.points.extend(_points(opt, problem, a, shape, grid, ckpt_bytes, cache, sampler, weight))
        options.append(opt)
    return Universe(tuple(options), tuple(static), tuple(expired), tuple(early), shape, as_of, earliest_day,
                    deadline_day, horizon, tuple(unpriced))


def _unquoted_reason(acc_id: str, problem: Problem, expired: list[Quote], early: list[Quote],
                     unpriced: list[Quote]) -> str:
    cat = problem.catalog
    exp = [q for q in expired if cat.systems[q.system].accelerator == acc_id]
    pre = [q for q in early if cat.systems[q.system].accelerator == acc_id]
    nop = [q for q in unpriced if cat.systems[q.system].accelerator == acc_id]
    if nop:
        return f"no price yet ({', '.join(q.id for q in nop)}): see its break-even price"
    if exp:
        return (f"every quote expired ({', '.join(f'{q.id} on {q.valid_until}' for q in exp)}); "
                "use --allow-expired")
    if pre:
        return f"every quote is dated after as_of {problem.as_of} ({', '.join(q.id for q in pre)})"
    return "no quote: hardware without a price cannot be chosen"


def _rule_mfu_factor(spec: ProblemSpec, attrs: Mapping[str, Any], gpus: int, nodes: int, power_kw: float) -> float:
    factor = 1.0
    for rule, then in adjustments(spec.rules, attrs, gpus, nodes, None, power_kw):
        if then.mfu_factor is not None and rule.when.quote is None:
            factor *= then.mfu_factor
    return factor


def owning(problem: Problem) -> Owning:
    """How this problem charges bought hardware beyond its price: `policy.after_run`, and the hall — a colocation
    cage's rent (cash) when the site gives one, else the own-hall assumption (an allocated cost, not cash)."""
    site = problem.spec.site
    colo = site.colocation_usd_per_kw_month if site is not None else None
    rate = colo if colo is not None else problem.assumptions.values.money.facility_usd_per_kw_month
    return Owning(problem.spec.policy.after_run, float(rate), colo is not None)


def spare_nodes_pct(problem: Problem) -> float:
    """Hot spares, % of a multi-node plan's nodes: `policy.spare_nodes_pct`, else `reliability.spare_nodes_pct`."""
    pct = problem.spec.policy.spare_nodes_pct
    return float(pct if pct is not None else problem.assumptions.values.reliability.spare_nodes_pct)


def problem_run_data(problem: Problem, shape: Shape | None = None) -> RunData:
    """What the problem's run keeps and moves (`checkpoints.run_data`): its checkpoint (`memory.checkpoint_bytes`),
    the kept checkpoints and the dataset."""
    w, a = problem.spec.workload, problem.assumptions.values
    shape = shape or model_shape(w.params, a.memory, w.layers, w.hidden, w.heads, w.vocab)
    return run_data(checkpoint_bytes(w.params, w.method, w.optimizer, shape, a.memory, w.lora_rank), w.tokens,
                    a.data)


def kind_of(opt: Option, problem: Problem, shape: Shape | None = None) -> "Kind":
    """What the cost formulas of the option's points read (`Kind`)."""
    return Kind(opt.mode, opt.system, opt.accel, opt.porting, problem_run_data(problem, shape),
                spare_nodes_pct(problem))


def _points(opt: Option, problem: Problem, a: Assumptions, shape: Shape, grid: list[int], ckpt_bytes: float,
            estimates: EstimateCache, sampler: RunSampler, weight: float) -> list[Point]:
    """The points of one option, in grid order."""
    spec = problem.spec
    system, accel = opt.system, opt.accel
    own = owning(problem)
    site = spec.site
    node_kw = float(system.node_kw.value)
    npr = max(1, int(system.nodes_per_rack.value))
    fit = int(site.rack_power_kw // node_kw) if site is not None else 0
    quote_keys: dict[str, tuple[float, PriceKey]] = {
        q.id: (q.price, price_key(q, provider_class(q.mode, q.vendor, a.data),
                                  deposit_share_days=deposit_share_days(q, a.money, a.confidence)))
        for q in opt.quotes}
    keys = sorted({k for _, k in quote_keys.values()})
    ranges = {k: (min(pr for pr, kk in quote_keys.values() if kk == k),
                  max(pr for pr, kk in quote_keys.values() if kk == k)) for k in keys}
    estimators: dict[float, PointEstimator] = {}
    cache = estimates.setdefault((system, accel, opt.preemptible), {})
    mfu_rules = any(not isinstance(r.then, str) and r.then.mfu_factor is not None for r in spec.rules)
    kind = kind_of(opt, problem, shape)
    ref = weakref.ref(opt)
    out: list[Point] = []
    for n in grid:
        gpus = n * system.per_node
        power_kw = n * node_kw
        rule_f = _rule_mfu_factor(spec, opt.attrs, gpus, n, power_kw) if mfu_rules else 1.0
        key = (n, rule_f)
        if key not in cache:
            if rule_f not in estimators:  # MFU does not depend on the node count
                estimators[rule_f] = PointEstimator(spec, a, shape, system, accel,
                                                    workload_utilisation(spec, a, accel, rule_f), ckpt_bytes,
                                                    opt.preemptible)
            cache[key] = estimators[rule_f].at(n)
        mem, t = cache[key]
        days = max(1, math.ceil(t.days - 1e-9)) if t is not None else 0
        racks_phys = math.ceil(n / npr)
        racks_pow = math.ceil(n / min(npr, fit)) if site is not None and fit >= 1 else None
        runs = _runs_of(sampler, t, accel, measured_mfu(spec, accel.id) is not None)
        per_node = PerNode(quote_keys, _templates_of(kind, keys, spec, a, n, t, node_kw, own, runs, weight), ranges)
        out.append(Point(ref, n, (opt.id, n), gpus, mem, t, days, power_kw, racks_phys, racks_pow, per_node,
                         _fixed_of(kind, a, gpus, n, t, runs, weight)))
    return out


@dataclass(frozen=True)
class Kind:
    """What a point's cost formulas read of its option (mode, system, accelerator, porting), apart from the option:
    the closures that price a point on first use keep this, not the option, so a universe holds no cycle through
    them (see `Point.option`)."""

    mode: str
    system: System
    accel: Accelerator
    porting: Porting
    run: RunData
    """What the run keeps and moves (storage, transfers)."""
    spare_pct: float
    """Hot spares, % of a multi-node plan's nodes."""


def _runs_of(sampler: RunSampler, t: TimeEstimate | None, accel: Accelerator,
             measured: bool) -> Callable[[], Runs | None]:
    """The point's run scenarios, made on first use (most points are never priced); None when unworkable."""
    def get() -> Runs | None:
        return None if t is None else sampler.runs(t, accel.software, accel.cls, measured)
    return get


def _fixed_at(opt: Kind, a: Assumptions, gpus: int, n: int, t: TimeEstimate, hours: float) -> Lines:
    """The per-plan lines (`cost.fixed_lines`) of a point whose planned run is `t`, for a run of `hours`: its
    interruption rate λ = interruptions ÷ wall hours (the expected count scales with the run's length); bought
    hardware's storage and transfers at the owned rates (rented capacity's are per node of each quote)."""
    rate = t.interruptions / t.wall_hours if t.wall_hours > 0 else 0.0
    data = data_cost(opt.run, "owned", a.data) if opt.mode == "buy" else None
    return fixed_lines(mode=opt.mode, gpus=gpus, nodes=n, wall_hours=hours, porting_weeks=opt.porting.weeks,
                       money=a.money, reliability=a.reliability, failures_per_hour=rate, data=data)


def _fixed_of(opt: Kind, a: Assumptions, gpus: int, n: int, t: TimeEstimate | None,
              runs: Callable[[], Runs | None], weight: float) -> Callable[[], Lines]:
    """Per-plan lines (`_fixed_at`) as planned, plus `throughput` (their mean over the run scenarios less the planned
    figure) and, with a CVaR weight λ, `tail` (λ × their mean over the longest runs less the mean)."""
    def make() -> Lines:
        r = runs()
        if t is None or r is None:
            return Lines()
        lines = _fixed_at(opt, a, gpus, n, t, t.wall_hours)
        grid = r.span(wall_kinks(a.money, 0.0, 0.0))
        at = [_fixed_at(opt, a, gpus, n, t, h) for h in grid]
        mean = r.masses(grid)
        cost = np.array([x.total_cost for x in at])
        cash = np.array([x.total_cash for x in at])
        lines.add("throughput", float(mean @ cost) - lines.total_cost, cash=float(mean @ cash) - lines.total_cash)
        if weight > 0:
            lines.add("tail", weight * float((r.tail_masses(grid) - mean) @ cost))
        return lines
    return make


def _templates_of(opt: Kind, keys: list[PriceKey], spec: ProblemSpec, a: Assumptions, n: int,
                  t: TimeEstimate | None, node_kw: float, own: Owning, runs: Callable[[], Runs | None],
                  weight: float) -> Callable[[bool, int], dict[PriceKey, Any]]:
    def make(sums: bool, wait: int) -> dict[PriceKey, Any]:
        r = runs()
        if t is None or r is None or (wait > 0 and opt.mode != "buy"):
            return {}
        out = {}
        expected: dict[PriceKey, tuple[tuple[float, float, float, float], tuple[float, float]]] = {}
        for key in keys:
            planned = _template(opt, key, spec, a, n, t, node_kw, own, wait, True)
            plain = key[:5] + (0.0,)   # the key without a deposit: its mean is shared by every lead time
            if plain not in expected:
                expected[plain] = _expected(opt, plain, spec, a, n, node_kw, own, wait, r, weight)
            mean, tail = _with_deposit(opt, key, a, n, weight, expected[plain])
            if sums:
                out[key] = (mean[0] + tail[0], mean[1] + tail[1], mean[2], mean[3])
                continue
            l0, l1 = _template(opt, key, spec, a, n, t, node_kw, own, wait, False)
            for lines, c, k in ((l0, 0, 2), (l1, 1, 3)):
                lines.add("throughput", mean[c] - planned[c], cash=mean[k] - planned[k])
                if weight > 0:
                    lines.add("tail", tail[c])
            out[key] = (l0, l1)
        return out
    return make


def _with_deposit(opt: Kind, key: PriceKey, a: Assumptions, n: int, weight: float,
                  base: tuple[tuple[float, float, float, float], tuple[float, float]]
                  ) -> tuple[tuple[float, float, float, float], tuple[float, float]]:
    """`_expected` of a key from that of its key without a deposit (the same but for its last element): the
    deposit's cost of capital per dollar, K (`cost.deposit_capital_per_dollar`), does not depend on the run's length,
    so its mean over the runs is K and its run-length tail 0; an estimated price adds K's own price tail (as
    `_expected` adds the price-driven cost's). Computed so once per key without a deposit, not once per lead time:
    a marketplace's bought quotes have hundreds of distinct ones."""
    mean, tail = base
    k = deposit_capital_per_dollar(nodes=n, spares=spare_fraction(n, opt.spare_pct), deposit_share_days=key[5],
                                   money=a.money) if opt.mode == "buy" else 0.0
    if k == 0.0:
        return base
    extra = weight * price_tail_factor(a) * k if key[1] and weight > 0 else 0.0
    return (mean[0], mean[1] + k, mean[2], mean[3]), (tail[0], tail[1] + extra)


def _expected(opt: Kind, key: PriceKey, spec: ProblemSpec, a: Assumptions, n: int, node_kw: float, own: Owning,
              wait: int, r: Runs, weight: float) -> tuple[tuple[float, float, float, float], tuple[float, float]]:
    """((cost at price 0, cost per dollar, cash at price 0, cash per dollar) of one node of a price key, each its
    mean over the run scenarios; (the mean–CVaR premium at price 0 and per dollar)).

    Each is a piecewise-linear function of the run's hours (every hour billed, held or powered), exact at its
    kinks (`scenarios.wall_kinks`) and between them, so its mean is the interpolation masses of the runs
    (`Runs.masses`) times its values at the kinks. The premium is λ × (mean over the longest runs − mean); an
    estimated price adds the premium of its own spread on the price-driven cost (`price_tail_factor`)."""
    commit_months, est, term_hours, after, cls, deposit = key
    held = (a.install_days[opt.accel.cls] + wait) * 24.0 if opt.mode == "buy" else 0.0  # type: ignore[index]
    grid = r.span(wall_kinks(a.money, commit_months, held, term_hours))
    if opt.mode == "buy":
        values = np.array([_template(opt, key, spec, a, n, _run_of(h), node_kw, own, wait, True) for h in grid])
    else:   # rented: the hours past a tier's term and the node's data at price 0, the per-dollar lines, at once
        values = np.column_stack(rented_per_dollar(mode=opt.mode, hours=np.array(grid), per_node=opt.system.per_node,
                                                   commit_months=commit_months, money=a.money, estimate=est,
                                                   term_hours=term_hours, after_usd_per_gpu_hour=after,
                                                   spares=spare_fraction(n, opt.spare_pct),
                                                   data=data_cost(opt.run, cls, a.data).per_node(n)))
    m = r.masses(grid)
    mean = m @ values
    if weight <= 0:
        return (float(mean[0]), float(mean[1]), float(mean[2]), float(mean[3])), (0.0, 0.0)
    tail = weight * ((r.tail_masses(grid) - m) @ values[:, :2])
    p1 = float(tail[1])
    if est:  # an estimated price: its own tail on the price-driven cost without the estimate premium
        free = (commit_months, False, term_hours, after, cls, deposit)
        plain = np.array([_template(opt, free, spec, a, n, _run_of(h), node_kw, own, wait, True)[1]
                          for h in grid]) if opt.mode == "buy" else values[:, 3]
        p1 += weight * price_tail_factor(a) * float(m @ plain)
    return (float(mean[0]), float(mean[1]), float(mean[2]), float(mean[3])), (float(tail[0]), p1)


def _run_of(hours: float) -> TimeEstimate:
    """A run of `hours` in which every hour counts (billed, held, powered): ideal = wall, no failure rework apart."""
    return TimeEstimate(0.0, 0.0, 0.0, hours, hours, 0.0, math.inf, 0.0)


def _template(opt: Kind, key: PriceKey, spec: ProblemSpec, a: Assumptions, n: int, t: TimeEstimate,
              node_kw: float, own: Owning, wait: int, sums: bool) -> Any:
    """Per-node lines at price 0 and their change per dollar of price (see `PerNode`), for bought hardware that
    waits `wait` days before the start; with `sums`, only the totals of both (`Sums`). The hot spares
    (`cost.spare_fraction`) with every node; a rented node's share of storage and transfers at its quote's
    provider's rates (`checkpoints.data_cost`), at price 0."""
    commit_months, est, term_hours, after, cls, deposit = key
    spares = spare_fraction(n, opt.spare_pct)
    if opt.mode == "buy":
        site = spec.site
        assert site is not None
        terms = buy_node_terms(nodes=n, ideal_hours=t.ideal_hours, wall_hours=t.wall_hours,
                               install_days=a.install_days[opt.accel.cls], wait_days=wait,  # type: ignore[index]
                               node_kw=node_kw, pue=site.pue, usd_per_kwh=site.electricity_usd_per_kwh,
                               money=a.money, owning=own, consumer=opt.accel.cls == "consumer", estimate=est,
                               spares=spares, deposit_share_days=deposit)
        if sums:
            return _affine_sums(terms)
        return lines_at(terms, 0.0), Lines({name: k for name, k, _c0, _kk, _k0 in terms},
                                           {name: kk for name, _k, _c0, kk, _k0 in terms if name not in RISK_LINES})

    data = data_cost(opt.run, cls, a.data).per_node(n)

    def at(price: float) -> Lines:
        into = Totals() if sums else None
        if opt.mode == "cloud":
            return cloud_node_lines(usd_per_gpu_hour=price, per_node=opt.system.per_node, ideal_hours=t.ideal_hours,
                                    wall_hours=t.wall_hours, commit_months=commit_months, money=a.money, estimate=est,
                                    into=into, term_hours=term_hours, after_usd_per_gpu_hour=after, spares=spares,
                                    data=data)
        return managed_node_lines(usd_per_month=price, ideal_hours=t.ideal_hours, wall_hours=t.wall_hours,
                                  commit_months=commit_months, money=a.money, estimate=est, into=into, spares=spares,
                                  data=data)

    # at price 0: the node's storage and transfers, and the hours past a tier's term at their own rate
    l0, one = at(0.0), at(1.0)
    if sums:
        return (l0.total_cost, one.total_cost - l0.total_cost, l0.total_cash, one.total_cash - l0.total_cash)
    return l0, one.merged(l0.scaled(-1.0))


def _affine_sums(terms: list[Term]) -> Sums:
    """(cost at price 0, cost per dollar, cash at price 0, cash per dollar) of a bought node's terms."""
    c0 = c1 = k0 = k1 = 0.0
    for name, cost_k, cost_0, cash_k, cash_0 in terms:
        c0 += cost_0
        c1 += cost_k
        if name not in RISK_LINES:
            k0 += cash_0
            k1 += cash_k
    return (c0, c1, k0, k1)


__all__ = ["Option", "Point", "Universe", "Excluded", "build_universe", "quote_ready_day", "option_quote_ready",
           "price_key", "EstimateCache", "estimate_point", "PointEstimator", "workload_utilisation", "owning",
           "offer_of", "OFFERS", "PriceKey", "Sums", "PerNode", "MAX_READY_CACHED", "calendar_horizon", "Estimates",
           "SHARED_ESTIMATES", "shared_estimates", "measured_mfu"]


def node_cost_at(opt: Option, q: Quote, problem: Problem, n: int, wall_hours: float, wait_days: int
                 ) -> tuple[float, float]:
    """(cost at price 0, cost per dollar of price) of one node of quote `q` at n nodes for a run of `wall_hours`
    (every hour of it billed or held, failures included), without the estimated-price premium: the same formulas
    as the model's templates, at a wall time the scenarios choose (`scenarios.py`)."""
    t = TimeEstimate(0.0, 0.0, 0.0, wall_hours, wall_hours, 0.0, math.inf, 0.0)
    a = problem.assumptions.values
    key = price_key(q, provider_class(q.mode, q.vendor, a.data), estimate=False,
                    deposit_share_days=deposit_share_days(q, a.money, a.confidence))
    c0, c1, _k0, _k1 = _template(kind_of(opt, problem), key, problem.spec, a, n, t,
                                 float(opt.system.node_kw.value), owning(problem), wait_days, True)
    return c0, c1


def plan_fixed_cost_at(opt: Option, problem: Problem, n: int, wall_hours: float) -> float:
    """The per-plan lines (`_fixed_at`: porting, operations, orchestration, recovery; bought hardware's storage and
    transfers) of a run of `wall_hours` at n nodes, the point's interruption rate at that length."""
    t = next(pt.time for pt in opt.points if pt.n == n and pt.time is not None)
    return _fixed_at(kind_of(opt, problem), problem.assumptions.values, n * opt.system.per_node, n, t,
                     wall_hours).total_cost
