"""Estimates per option: every (system, mode) the catalog offers, at every candidate node count.

An *option* is a system bought, rented or contracted (e.g. `dgx-b200/buy`), with the quotes that offer it.
A *point* is an option at n nodes: memory per GPU, wall time, power, racks and cost lines, all computed here
by the pure estimators so that the CP-SAT model only selects among constants (one-hot, linear; see
`../shared/reference/cp-sat-notes.md` §1.4). Options that cannot be modelled at all (no quote, every quote
expired, buying without a site) are returned as static exclusions with their reason.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Callable, Iterator, Mapping

from .assumptions import Assumptions, Porting
from .catalog import Accelerator, Catalog, Quote, System
from .compute import TimeEstimate, estimate_time, training_flops, utilisation
from .cost import Lines, Totals, buy_node_lines, cloud_node_lines, fixed_lines, managed_node_lines
from .errors import InputError
from .memory import (RECOMPUTE_ORDER, MemoryEstimate, Shape, adapter_params, memory_per_gpu, model_shape)
from .problem import LoadedProblem, Problem
from .rules import matches_attrs, matches_point, referenced_names
from .yamlsrc import path_str


PriceKey = tuple[float, bool]
"""What a quote's per-node lines depend on besides its price: (commit_months, is an estimate)."""


Sums = tuple[float, float, float, float]
"""A price key's per-node totals: cost at price 0, cost per unit of price, cash at price 0, cash per unit."""


class PerNode(Mapping[str, Lines]):
    """Per-node cost lines of every quote of an option at one point, made on demand.

    Every per-node line is affine in the quote's price (cost.py: buy = price × depreciation share + energy,
    cloud = rate × billed hours, managed = price × months), so they are computed once per price key at price 0
    and 1, L(price) = L0 + price × (L1 − L0), instead of once per quote. With thousands of quotes this is what
    keeps building the universe linear in options × node counts. The totals (`cost`, `cash`), which the model,
    the bounds and the enumeration all use, come from `cost.Totals` (the same formulas without the named lines);
    the named lines are made only for the plans that are shown.
    """

    __slots__ = ("_quotes", "_make", "_sums", "_lines", "_ranges", "_cache")

    def __init__(self, quotes: dict[str, tuple[float, PriceKey]], make: Callable[[bool], dict[PriceKey, Any]],
                 ranges: dict[PriceKey, tuple[float, float]]):
        self._quotes = quotes
        self._make = make
        self._sums: dict[PriceKey, Sums] | None = None
        self._lines: dict[PriceKey, tuple[Lines, Lines]] | None = None
        self._ranges = ranges
        self._cache: dict[str, Lines] = {}

    @property
    def _templates(self) -> dict[PriceKey, Sums]:
        """Computed on first use: many points (too little memory, too slow for the deadline) are never priced."""
        if self._sums is None:
            self._sums = self._make(True)
        return self._sums

    def __getitem__(self, qid: str) -> Lines:
        got = self._cache.get(qid)
        if got is None:
            if self._lines is None:
                self._lines = self._make(False)
            price, key = self._quotes[qid]
            l0, l1 = self._lines[key]
            got = Lines({k: l0.cost.get(k, 0.0) + price * v for k, v in l1.cost.items()},
                        {k: l0.cash.get(k, 0.0) + price * v for k, v in l1.cash.items()})
            self._cache[qid] = got
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._quotes)

    def __len__(self) -> int:
        return len(self._quotes)

    def cost(self, qid: str) -> float:
        price, key = self._quotes[qid]
        c0, c1, _k0, _k1 = self._templates[key]
        return c0 + price * c1

    def cash(self, qid: str) -> float:
        price, key = self._quotes[qid]
        _c0, _c1, k0, k1 = self._templates[key]
        return k0 + price * k1

    def total(self, qid: str, cash: bool) -> float:
        return self.cash(qid) if cash else self.cost(qid)

    def key_totals(self, key: PriceKey, cash: bool) -> tuple[float, float]:
        """(total at price 0, total per unit of price) of one price key: total(q) = t0 + q.price × t1, evaluated
        in that order so that it is the same float as `cost`/`cash`."""
        c0, c1, k0, k1 = self._templates[key]
        return (k0, k1) if cash else (c0, c1)

    def extreme(self, cash: bool, pick: Callable[..., float]) -> float:
        """min or max over the quotes of the per-node total (the ends of each price key's price range)."""
        vals = []
        for key, (c0, c1, k0, k1) in self._templates.items():
            t0, t1 = (k0, k1) if cash else (c0, c1)
            lo, hi = self._ranges[key]
            vals += [t0 + lo * t1, t0 + hi * t1]
        return pick(vals)


@dataclass
class Point:
    option: "Option"
    n: int
    gpus: int
    memory: MemoryEstimate
    time: TimeEstimate | None
    days: int
    power_kw: float
    racks_physical: int
    racks_with_power: int | None
    fixed_make: Callable[[], Lines]
    per_node: PerNode
    mfu_rule_factor: float
    violations: list[frozenset[str]] | None = None
    excluded: bool | None = None
    _fixed: Lines | None = None

    @property
    def fixed(self) -> Lines:
        """Per-plan lines (porting, operations), computed on first use like the per-node lines."""
        if self._fixed is None:
            self._fixed = self.fixed_make()
        return self._fixed

    @property
    def fits(self) -> bool:
        return self.memory.fits

    @property
    def workable(self) -> bool:
        return self.time is not None


@dataclass
class Option:
    id: str
    system: System
    accel: Accelerator
    mode: str
    quotes: list[Quote]
    attrs: dict[str, Any]
    porting: Porting
    ready_day: int
    ready_reason: str
    points: list[Point] = field(default_factory=list)
    static_violations: Any = None
    ceilings: dict[int, int] = field(default_factory=dict)  # money unit -> max cost of a point (model.cost_ceiling)
    memo: dict[Any, Any] = field(default_factory=dict)  # derived per-option data (bounds.py)

    @property
    def pair(self) -> str:
        return f"{self.accel.id}/{self.mode}"


@dataclass
class Excluded:
    option: str
    reasons: list[str]


@dataclass
class Universe:
    """Everything the model chooses from, plus what was excluded before modelling and why."""

    options: list[Option]
    static_excluded: list[Excluded]
    expired: list[Quote]
    shape: Shape
    as_of: date
    earliest_day: int
    deadline_day: int | None
    horizon: int
    origins: dict[str, str] = field(default_factory=dict)

    def where(self, lp: LoadedProblem, gid: str) -> str:
        """file:line of a group: the problem file, or the catalog file for a quote's capacity."""
        parts = gid.split(".")
        if parts[0] == "quotes" and len(parts) >= 3:
            return self.origins.get(".".join(parts[1:-1]), "catalog")
        if parts[0] == "rules":
            for i, r in enumerate(lp.problem.rules):
                if r.name == ".".join(parts[1:]):
                    return lp.where(("rules", i))
        return lp.where(tuple(parts[:2]) if parts[0] != "workload" else ("workload",))

    def subset(self, pair: str) -> "Universe":
        """The same problem restricted to one accelerator/mode pair (for runners-up and exclusions)."""
        return Universe([o for o in self.options if o.pair == pair], [], self.expired, self.shape, self.as_of,
                        self.earliest_day, self.deadline_day, self.horizon, self.origins)

    def pairs(self) -> list[str]:
        return sorted({o.pair for o in self.options if any(pt.workable for pt in o.points)})

    def quote(self, qid: str) -> Quote:
        for o in self.options:
            for q in o.quotes:
                if q.id == qid:
                    return q
        raise KeyError(qid)


def node_grid(a: Assumptions) -> list[int]:
    g = a.node_grid
    counts = list(range(1, min(g.fine_until, g.max_nodes) + 1))
    n = counts[-1]
    while n < g.max_nodes:
        step = g.step_until_512 if n < 512 else g.step_until_max
        n = (n // step + 1) * step
        if n <= g.max_nodes:
            counts.append(n)
    return counts


def check_references(lp: LoadedProblem, cat: Catalog) -> None:
    """Ids in policy and rules must exist in the catalog: a typo must not silently match nothing."""
    p = lp.problem
    known: dict[str, list[str]] = {
        "accelerator": sorted(cat.accelerators), "system": sorted(cat.systems), "quote": sorted(cat.quotes),
        "vendor": sorted({a.vendor for a in cat.accelerators.values()}),
        "class": ["consumer", "workstation", "datacenter", "tpu", "wafer"], "mode": ["buy", "cloud", "managed"],
        "cooling": ["air", "liquid"], "software": ["cuda", "rocm", "xla", "cerebras", "synapse"],
        "network": sorted({s.network for s in cat.systems.values()}),
    }

    def check(kind: str, value: str, path: tuple[Any, ...]) -> None:
        if value.lower() not in [k.lower() for k in known[kind]]:
            hint = difflib.get_close_matches(value, known[kind], n=1)
            raise lp.source.error(path, f"unknown {kind} '{value}'" + (f"; did you mean '{hint[0]}'?" if hint else ""))

    for key in ("include", "exclude"):
        for i, v in enumerate(getattr(p.policy.accelerators, key)):
            check("accelerator", v, ("policy", "accelerators", key, i))
        for i, v in enumerate(getattr(p.policy.vendors, key)):
            check("vendor", v, ("policy", "vendors", key, i))
    for r_i, rule in enumerate(p.rules):
        for kind, values in referenced_names(rule).items():
            for v in values:
                check(kind, v, ("rules", r_i, "when", kind))


def _attrs(system: System, accel: Accelerator, mode: str) -> dict[str, Any]:
    return {"accelerator": accel.id, "system": system.id, "vendor": accel.vendor, "class": accel.cls,
            "mode": mode, "ecc": bool(accel.ecc.value), "cooling": system.cooling, "software": accel.software,
            "network": system.network}


def _rule_mfu_factor(p: Problem, attrs: dict[str, Any], gpus: int, nodes: int, power_kw: float) -> float:
    factor = 1.0
    for rule in p.rules:
        then = rule.then
        if isinstance(then, str) or then.mfu_factor is None or rule.when.quote is not None:
            continue
        if matches_attrs(rule.when, attrs) and matches_point(rule.when, gpus, nodes, None, power_kw):
            factor *= then.mfu_factor
    return factor


def _recompute_levels(requested: str) -> tuple[str, ...]:
    return RECOMPUTE_ORDER if requested == "auto" else (requested,)


def build_universe(lp: LoadedProblem, cat: Catalog, a: Assumptions, *, allow_expired: bool = False,
                   only_pairs: set[str] | None = None, estimates: "EstimateCache | None" = None) -> Universe:
    """All options and their points (see module docstring). Pure given its inputs; sorted by id.
    `only_pairs` limits the work to some accelerator/mode pairs (what-if re-solves of one option).
    `estimates` carries memory and time estimates between builds of the *same* problem and assumptions whose
    quotes differ (break-even searches re-price one quote): they depend on the systems, not on prices."""
    p = lp.problem
    w = p.workload
    as_of = lp.as_of
    shape = model_shape(w.params, a.memory, w.layers, w.hidden, w.heads, w.vocab)
    lora_rank = w.lora_rank
    ckpt_params = adapter_params(shape, lora_rank or a.memory.lora_rank) if w.method in ("lora", "qlora") else w.params
    ckpt_bytes = a.reliability.checkpoint_bytes_per_param * ckpt_params
    grid = node_grid(a)
    earliest_day = (lp.earliest_start - as_of).days
    deadline_day = (p.schedule.deadline - as_of).days if p.schedule.deadline else None

    by_option: dict[tuple[str, str], list[Quote]] = {}
    expired: list[Quote] = []
    for qid in sorted(cat.quotes):
        q = cat.quotes[qid]
        if q.expired(as_of) and not allow_expired:
            expired.append(q)
            continue
        by_option.setdefault((q.system, q.mode), []).append(q)

    static: list[Excluded] = []
    options: list[Option] = []
    quoted_accels = {cat.systems[s].accelerator for (s, _m) in by_option}
    for acc_id in sorted(cat.accelerators):
        if acc_id not in quoted_accels:
            exp = [q for q in expired if cat.systems[q.system].accelerator == acc_id]
            reason = (f"every quote expired ({', '.join(f'{q.id} on {q.valid_until}' for q in exp)}); "
                      "use --allow-expired") if exp else "no quote: hardware without a price cannot be chosen"
            static.append(Excluded(acc_id, [reason]))

    max_lead = 0.0
    cache: EstimateCache = estimates if estimates is not None else {}
    for (sys_id, mode), quotes in sorted(by_option.items()):
        system = cat.systems[sys_id]
        accel = cat.accelerators[system.accelerator]
        oid = f"{sys_id}/{mode}"
        if only_pairs is not None and f"{accel.id}/{mode}" not in only_pairs:
            continue
        if mode == "buy" and p.site is None:
            static.append(Excluded(oid, ["no site: buying hardware needs a `site:` section"]))
            continue
        porting = a.porting[accel.software][w.framework]  # type: ignore[index]
        avail_day = max(0, (accel.available_from.value - as_of).days)
        ready_day = max(math.ceil(porting.delay_days), avail_day)
        ready_reason = ("porting" if porting.delay_days >= avail_day and porting.delay_days > 0 else
                        "available_from" if avail_day > 0 else "now")
        opt = Option(oid, system, accel, mode, quotes, _attrs(system, accel, mode), porting, ready_day, ready_reason)
        for q in quotes:
            max_lead = max(max_lead, q.lead_days(a.confidence))
        _fill_points(opt, p, a, shape, grid, ckpt_bytes, cache)
        options.append(opt)

    horizon = max(earliest_day, ready_max(options)) + int(max_lead) + max(
        a.install_days.values()) + max((pt.days for o in options for pt in o.points), default=0) + 30
    if deadline_day is not None:
        horizon = max(horizon, deadline_day + 1)
    origins = {k.split(":", 1)[1]: v for k, v in cat.origin.items() if k.startswith("quotes:")}
    return Universe(options, static, expired, shape, as_of, earliest_day, deadline_day, int(horizon), origins)


def ready_max(options: list[Option]) -> int:
    return max((o.ready_day for o in options), default=0)


def _estimate(p: Problem, a: Assumptions, shape: Shape, system: System, accel: Accelerator, n: int, util: float,
              ckpt_bytes: float) -> tuple[MemoryEstimate, TimeEstimate | None]:
    """Memory (the least recomputation that fits, for `auto`) and wall time of a system at n nodes."""
    w = p.workload
    gpus = n * system.per_node
    mem: MemoryEstimate | None = None
    chosen = "none"
    for chosen in _recompute_levels(w.recompute):  # the least recomputation that fits, else the most
        mem = memory_per_gpu(params=w.params, gpus=gpus, per_node=system.per_node,
                             available_gb=float(accel.memory_gb.value), method=w.method, optimizer=w.optimizer,
                             seq_len=w.seq_len, recompute=chosen, shape=shape, mem=a.memory, lora_rank=w.lora_rank,
                             flash_attention=w.flash_attention)
        if mem.fits:
            break
    assert mem is not None
    flops = training_flops(w.params, w.tokens, w.method, chosen, shape.layers, shape.hidden, w.seq_len)
    t = estimate_time(a=a, flops=flops, gpus=gpus, nodes=n, per_node=system.per_node, network=system.network,
                      peak_tflops=accel.peak_tflops(w.precision), util=util, accel_class=accel.cls,
                      checkpoint_bytes=ckpt_bytes)
    if t is not None and (t.lost_fraction > a.reliability.max_lost_fraction or t.days > a.max_training_days):
        t = None
    return mem, t


def _utilisation(p: Problem, a: Assumptions, accel: Accelerator, rule_f: float) -> float:
    w = p.workload
    return utilisation(software=accel.software, accel_class=accel.cls, params=w.params, seq_len=w.seq_len,
                       precision=w.precision, has_fp8=accel.fp8_tflops.value is not None, method=w.method,
                       c=a.compute, rule_factor=rule_f).value


EstimateCache = dict[tuple[str, int, float], tuple[MemoryEstimate, "TimeEstimate | None"]]


def _fill_points(opt: Option, p: Problem, a: Assumptions, shape: Shape, grid: list[int], ckpt_bytes: float,
                 cache: EstimateCache) -> None:
    """The points of one option. Memory and time depend on the system, not the mode, so the buy, cloud and
    managed options of a system share them through `cache`."""
    system, accel = opt.system, opt.accel
    site = p.site
    node_kw = float(system.node_kw.value)
    npr = max(1, int(system.nodes_per_rack.value))
    fit = int(site.rack_power_kw // node_kw) if site is not None else 0
    quote_keys: dict[str, tuple[float, PriceKey]] = {
        q.id: (q.price, (q.commit_months, q.kind == "estimate")) for q in opt.quotes}
    keys = sorted({k for _, k in quote_keys.values()})
    ranges = {k: (min(pr for pr, kk in quote_keys.values() if kk == k), max(pr for pr, kk in quote_keys.values() if kk == k))
              for k in keys}
    utils: dict[float, float] = {}
    mfu_rules = any(not isinstance(r.then, str) and r.then.mfu_factor is not None for r in p.rules)
    for n in grid:
        gpus = n * system.per_node
        power_kw = n * node_kw
        rule_f = _rule_mfu_factor(p, opt.attrs, gpus, n, power_kw) if mfu_rules else 1.0
        key = (system.id, n, rule_f)
        if key not in cache:
            if rule_f not in utils:  # MFU does not depend on the node count
                utils[rule_f] = _utilisation(p, a, accel, rule_f)
            cache[key] = _estimate(p, a, shape, system, accel, n, utils[rule_f], ckpt_bytes)
        mem, t = cache[key]
        days = max(1, math.ceil(t.days - 1e-9)) if t is not None else 0
        racks_phys = math.ceil(n / npr)
        racks_pow = math.ceil(n / min(npr, fit)) if site is not None and fit >= 1 else None
        per_node = PerNode(quote_keys, _templates_of(opt, keys, p, a, n, t, node_kw), ranges)
        opt.points.append(Point(opt, n, gpus, mem, t, days, power_kw, racks_phys, racks_pow,
                                _fixed_of(opt, a, gpus, n, t), per_node, rule_f))


def _fixed_of(opt: Option, a: Assumptions, gpus: int, n: int, t: TimeEstimate | None) -> Callable[[], Lines]:
    def make() -> Lines:
        if t is None:
            return Lines()
        return fixed_lines(mode=opt.mode, gpus=gpus, nodes=n, wall_hours=t.wall_hours,
                           porting_weeks=opt.porting.weeks, money=a.money)
    return make


def _templates_of(opt: Option, keys: list[PriceKey], p: Problem, a: Assumptions, n: int, t: TimeEstimate | None,
                  node_kw: float) -> Callable[[bool], dict[PriceKey, Any]]:
    def make(sums: bool) -> dict[PriceKey, Any]:
        if t is None:
            return {}
        return {key: _template(opt, key, p, a, n, t, node_kw, sums) for key in keys}
    return make


def _template(opt: Option, key: PriceKey, p: Problem, a: Assumptions, n: int, t: TimeEstimate,
              node_kw: float, sums: bool) -> Any:
    """Per-node lines at price 0 and their change per dollar of price (see `PerNode`); with `sums`, only the
    totals of both (`Sums`)."""
    commit_months, est = key

    def at(price: float) -> Lines:
        into = Totals() if sums else None
        if opt.mode == "buy":
            site = p.site
            assert site is not None
            return buy_node_lines(
                price=price, nodes=n, ideal_hours=t.ideal_hours, wall_hours=t.wall_hours,
                install_days=a.install_days[opt.accel.cls], node_kw=node_kw, pue=site.pue,  # type: ignore[index]
                usd_per_kwh=site.electricity_usd_per_kwh, money=a.money, accounting=p.policy.accounting,
                consumer=opt.accel.cls == "consumer", estimate=est, into=into)
        if opt.mode == "cloud":
            return cloud_node_lines(usd_per_gpu_hour=price, per_node=opt.system.per_node, ideal_hours=t.ideal_hours,
                                    wall_hours=t.wall_hours, commit_months=commit_months, money=a.money, estimate=est,
                                    into=into)
        return managed_node_lines(usd_per_month=price, ideal_hours=t.ideal_hours, wall_hours=t.wall_hours,
                                  commit_months=commit_months, money=a.money, estimate=est, into=into)

    l1 = at(1.0)
    linear = opt.mode != "buy"  # rented and managed lines are proportional to the price: nothing at price 0
    if sums:
        if linear:
            return (0.0, l1.total_cost, 0.0, l1.total_cash)
        l0 = at(0.0)
        return (l0.total_cost, l1.total_cost - l0.total_cost, l0.total_cash, l1.total_cash - l0.total_cash)
    if linear:
        return Lines(), l1
    l0 = at(0.0)
    names = set(l0.cost) | set(l1.cost)
    slope = Lines({k: l1.cost.get(k, 0.0) - l0.cost.get(k, 0.0) for k in sorted(names)},
                  {k: l1.cash.get(k, 0.0) - l0.cash.get(k, 0.0) for k in sorted(set(l0.cash) | set(l1.cash))})
    return l0, slope


def quote_ready_day(q: Quote, opt: Option, a: Assumptions) -> int:
    """Days after as_of when this quote's capacity is usable (lead time at the confidence, plus install)."""
    install = a.install_days[opt.accel.cls] if opt.mode == "buy" else 0.0  # type: ignore[index]
    return math.ceil(q.lead_days(a.confidence) + install)


__all__ = ["Option", "Point", "Universe", "Excluded", "build_universe", "node_grid", "quote_ready_day",
           "check_references", "InputError", "path_str"]
