"""Python presolve: what can be proven about single points before CP-SAT sees them.

Most of a universe's points can never be chosen — too little memory, too late for the deadline, over budget even
with the cheapest quotes — and each of those facts is *exact* and *local*: a set of groups that, all enforced,
exclude the point whatever else is decided. They serve twice: the optimisation model leaves such points out
(their constraints stay in the model; only literals that could never be 1 are spared), and explanations use them
as proofs that need no solve (`answers/conflicts.py`).

A `Screen` holds these facts for one problem over one universe (and its pair subsets, which share its points):
it keeps them in its own dictionaries, keyed by point key, so the universe is never written to.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..estimate.chance import ChanceModel, chance_model
from ..estimate.outlook import Outlook
from ..estimate.options import Option, Point, Universe, option_quote_ready
from ..inputs.problem import Problem
from ..inputs.rules import matches_attrs, matches_point, policy_breaches, rule_group
from ..inputs.spec import ProblemSpec, Rule
from .arrays import distinct
from .groups import capacity_group
from .money import kept_share
from .prices import PriceTable, price_table
from .reduce import PointReducer, reducer_for

Reasons = list[frozenset[str]]
"""Point-local reasons: each item is a set of group ids that, all enforced, exclude the point."""

_MEMORY = frozenset({"workload.memory"})
_DEADLINE = frozenset({"schedule.deadline"})
_DEADLINE_START = frozenset({"schedule.deadline", "schedule.earliest_start"})
_RACK_POWER = frozenset({"site.rack_power_kw"})
_RACKS_POWER = frozenset({"site.racks", "site.rack_power_kw"})
_RACKS = frozenset({"site.racks"})
_POWER = frozenset({"site.it_power_kw"})
_PREEMPTIBLE = frozenset({"policy.allow_preemptible"})
PRETRAINING = ("pretrain", "continued_pretrain")


def preemptible_forbidden(spec: ProblemSpec, pt: Point) -> bool:
    """Spot capacity for a multi-node pretraining run, which `policy.allow_preemptible` must allow."""
    return (pt.option.preemptible and pt.n > 1 and spec.workload.method in PRETRAINING
            and not spec.policy.allow_preemptible)


@dataclass(frozen=True)
class OptionFacts:
    """The node-count-independent part of an option's screening."""

    breaches: tuple[frozenset[str], ...]
    first_ready: int
    forbids: tuple[Rule, ...]
    capacity: int
    capacity_groups: frozenset[str]
    min_nodes: int
    fabric_capacity: int
    """Most nodes the quotes of `policy.max_fabrics` fabrics can supply together (capacity when one job may span
    every fabric is `capacity`)."""
    in_time: tuple[tuple[frozenset[str], tuple[tuple[int, str, int, str], ...]], ...] = ()
    """For the deadline (and deadline + earliest start): each quote's latest run length that still finishes in time,
    its fabric, capacity and id, longest first — so the quotes usable at a point are a prefix."""


@dataclass(frozen=True)
class ScreenFindings:
    """Point reasons by point key (`Screen.findings`)."""

    local: dict[tuple[str, int], Reasons]
    violations: dict[tuple[str, int], Reasons]
    excluded: dict[tuple[str, int], bool]


def budget_line(problem: Problem) -> float | None:
    """What the budget reasons compare a point's undiscounted lines (fixed + its fill) with, in dollars; None when
    there is no budget or nothing to bound by.

    A rule's `add_pct` changes cost only, never cash (`rule_constraints._add_pct`), so a cash budget is its own line. A
    discount lowers a plan's cost to no less than `kept_share` × its lines (each discount adds its percentage of them
    once; the model rounds every term up), so a plan whose lines exceed budget / kept costs more than the budget:
    the line of a cost budget is budget / kept, the budget itself without a discount."""
    budget = problem.spec.budget
    if budget.max_usd is None:
        return None
    if budget.applies_to == "cash":
        return budget.max_usd
    kept = kept_share(problem)
    return budget.max_usd / kept if kept > 0 else None


class Screen:
    """Point-local exclusion facts of one problem over one universe (see module docstring)."""

    def __init__(self, problem: Problem, universe: Universe) -> None:
        self.problem = problem
        self.universe = universe
        self.budget_line = budget_line(problem)
        """The dollars a point's undiscounted lines are held to by its budget reasons (`budget_line`); None: none."""
        self._facts: dict[str, OptionFacts] = {}
        self._tables: dict[str, QuoteTable] = {}
        self._violations: dict[tuple[str, int], Reasons] = {}
        self._local: dict[tuple[str, int], Reasons] = {}
        self._prefixes: dict[tuple[str, int, int], tuple[int, int]] = {}
        self._prefix_runs: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
        self._prefix_sets: dict[tuple[str, int, int, bool], frozenset[str]] = {}
        self._slack_keys: dict[tuple[str, int], list[int]] = {}
        self._excluded: dict[tuple[str, int], bool] = {}
        self._chance: list[ChanceModel | None] = []
        self._outlook: list[Outlook] = []
        self._reducers: dict[tuple[str, int, frozenset[str], bool, frozenset[str] | None, bool],
                             PointReducer | None] = {}
        self._kept: dict[tuple[tuple[str, int, frozenset[str], bool, frozenset[str] | None, bool], int],
                         np.ndarray] = {}
        """The quotes each point keeps, per reducer (the few kept, not the many dropped: with a marketplace catalog
        the dropped sets of every point of every pair would hold most quotes many times over)."""

    @property
    def outlook(self) -> Outlook:
        """What the risk scenarios say about the problem's plans (`estimate/outlook.py`), made on first use."""
        if not self._outlook:
            self._outlook.append(Outlook.of(self.problem))
        return self._outlook[0]

    @property
    def chance(self) -> ChanceModel | None:
        """The deadline's chance model (`policy.deadline_confidence`), made on first use; None without one."""
        if not self._chance:
            self._chance.append(chance_model(self.problem, self.outlook))
        return self._chance[0]

    def facts(self, o: Option) -> OptionFacts:
        got = self._facts.get(o.id)
        if got is None:
            spec = self.problem.spec
            a = self.problem.assumptions.values
            breaches = tuple(frozenset({g}) for g in policy_breaches(spec, o.attrs, [q.kind for q in o.quotes]))
            first = max(o.ready_day, min(option_quote_ready(q, o, a) for q in o.quotes))
            forbids = tuple(r for r in spec.rules if r.then == "forbid" and r.when.cost is None
                            and r.when.quote is None and matches_attrs(r.when, o.attrs))
            per_fabric: dict[str, int] = {}
            for q in o.quotes:
                per_fabric[q.fabric_id] = per_fabric.get(q.fabric_id, 0) + q.max_nodes
            widest = sum(sorted(per_fabric.values(), reverse=True)[:spec.policy.max_fabrics])
            got = OptionFacts(breaches, first, forbids, sum(q.max_nodes for q in o.quotes),
                              frozenset(capacity_group(q.id) for q in o.quotes), min(q.min_nodes for q in o.quotes),
                              widest, self._in_time(o))
            self._facts[o.id] = got
        return got

    def violations(self, pt: Point, *, capacitated: bool = True, budget: bool = True) -> Reasons:
        """Every point-local reason the point can never be chosen (see module docstring).

        The reasons that need no price (`budget=False`) are computed once per point and shared by every caller;
        the budget's are added on top. `capacitated=False` skips the budget reasoning over quote capacities (the
        costly part, needed only to explain) when the point is excluded already; that partial answer is not kept.
        """
        got = self._violations.get(pt.key)
        if got is not None:
            return got
        local = self._local.get(pt.key)
        if local is None:
            local = self._local_reasons(pt)
            self._local[pt.key] = local
        if not budget:
            return local
        if local and not capacitated:
            return local  # excluded already: spare pricing the point
        out = local + self._budget(pt, capacitated) if self.budget_line is not None else local
        if capacitated:
            self._violations[pt.key] = out
        return out

    def _local_reasons(self, pt: Point) -> Reasons:
        """The reasons that need no price: policy, memory, capacity and fabrics, spot, the calendar, the site, and
        the rules that forbid whatever the plan costs."""
        o = pt.option
        facts = self.facts(o)
        spec = self.problem.spec
        u = self.universe
        out: Reasons = list(facts.breaches)
        if not pt.fits:
            out.append(_MEMORY)
        if pt.n > facts.capacity:
            out.append(facts.capacity_groups)
        elif pt.n > facts.fabric_capacity:
            out.append(facts.capacity_groups | {"policy.max_fabrics"})
        if preemptible_forbidden(spec, pt):
            out.append(_PREEMPTIBLE)
        if u.deadline_day is not None:
            if facts.first_ready + pt.days > u.deadline_day:
                out.append(_DEADLINE)
            elif spec.schedule.earliest_start is not None and \
                    max(facts.first_ready, u.earliest_day) + pt.days > u.deadline_day:
                out.append(_DEADLINE_START)
            else:
                out += self._capacity_in_time(pt)
        site = spec.site
        if o.mode == "buy" and site is not None:
            if pt.racks_with_power is None:
                out.append(_RACK_POWER)
            elif pt.racks_with_power > site.racks:
                out.append(_RACKS_POWER if pt.racks_physical <= site.racks else _RACKS)
            if pt.power_kw > site.it_power_kw + 1e-9:
                out.append(_POWER)
        for rule in facts.forbids:
            if matches_point(rule.when, pt.gpus, pt.n, pt.days, pt.power_kw):
                out.append(frozenset({rule_group(rule.name)}))
        return out

    def _in_time(self, o: Option) -> tuple[tuple[frozenset[str], tuple[tuple[int, str, int, str], ...]], ...]:
        u = self.universe
        if u.deadline_day is None:
            return ()
        a = self.problem.assumptions.values
        variants: list[tuple[frozenset[str], int]] = [(_DEADLINE, 0)]
        if self.problem.spec.schedule.earliest_start is not None:
            variants.append((_DEADLINE_START, u.earliest_day))
        out = []
        for base, earliest in variants:
            rows = sorted(((u.deadline_day - max(o.ready_day, option_quote_ready(q, o, a), earliest), q.fabric_id,
                            q.max_nodes, q.id) for q in o.quotes), reverse=True)
            out.append((base, tuple(rows)))
        return tuple(out)

    def _capacity_in_time(self, pt: Point) -> Reasons:
        """With the deadline enforced (and the earliest start), only quotes ready in time for this point can supply
        it: when their capacity is short of n — on one job's fabrics — the deadline and those capacities (and the
        fabric limit when it binds) exclude the point."""
        limit = self.problem.spec.policy.max_fabrics
        out: Reasons = []
        o = pt.option
        for v, (base, rows) in enumerate(self.facts(o).in_time):
            keys = self._slack_keys.get((o.id, v))
            if keys is None:
                keys = self._slack_keys[(o.id, v)] = [-r[0] for r in rows]
            k = bisect_right(keys, -pt.days)
            total, widest = self._prefix(o.id, v, rows, k, limit)
            if total < pt.n:
                out.append(self._prefix_items(o.id, v, base, rows, k, False))
            elif widest < pt.n:
                out.append(self._prefix_items(o.id, v, base, rows, k, True))
        return out

    def _prefix(self, oid: str, v: int, rows: tuple[tuple[int, str, int, str], ...], k: int,
                limit: int) -> tuple[int, int]:
        """For the first k quotes of an option's in-time order: their capacity and the most `limit` fabrics of them
        supply; one per distinct k, kept. With one fabric per job, every prefix's at once (`_prefix_runs`)."""
        if limit == 1:
            runs = self._prefix_runs.get((oid, v))
            if runs is None:
                runs = self._prefix_runs[(oid, v)] = _prefix_runs(rows)
            return runs[0][k], runs[1][k]
        key = (oid, v, k)
        got = self._prefixes.get(key)
        if got is None:
            per_fabric: dict[str, int] = {}
            for _longest, fabric, cap, _qid in rows[:k]:
                per_fabric[fabric] = per_fabric.get(fabric, 0) + cap
            got = (sum(per_fabric.values()), sum(sorted(per_fabric.values(), reverse=True)[:limit]))
            self._prefixes[key] = got
        return got

    def _prefix_items(self, oid: str, v: int, base: frozenset[str], rows: tuple[tuple[int, str, int, str], ...],
                      k: int, fabrics: bool) -> frozenset[str]:
        """The item of a point the first k quotes cannot supply (the schedule groups, their capacities, and the
        fabric limit when it binds): made only for points it excludes — a set per prefix length of a big option's
        quotes grows with the square of their number — and kept."""
        key = (oid, v, k, fabrics)
        got = self._prefix_sets.get(key)
        if got is None:
            got = base | frozenset(capacity_group(r[3]) for r in rows[:k]) | \
                (frozenset({"policy.max_fabrics"}) if fabrics else frozenset())
            self._prefix_sets[key] = got
        return got

    def _budget(self, pt: Point, capacitated: bool) -> Reasons:
        line = self.budget_line
        assert line is not None
        cash = self.problem.spec.budget.applies_to == "cash"
        fixed = pt.fixed.total_cash if cash else pt.fixed.total_cost
        if fixed + pt.n * pt.per_node.extreme(cash, min) > line:
            return [frozenset({"budget.max_usd"})]
        if len(pt.option.quotes) > 1 and capacitated:
            return self._capacitated_budget(pt, fixed, cash, line)
        return []

    def _capacitated_budget(self, pt: Point, fixed: float, cash: bool, limit: float) -> Reasons:
        """Budget reasoning over the quotes a point can really use.

        The cheapest split fills the cheapest quotes first (an exact lower bound for a linear cost with box limits;
        min_nodes and rule delays are ignored, which only makes the bound optimistic). With the deadline enforced,
        a quote whose capacity arrives too late for this point to finish in time cannot be used at all. An item
        lists exactly the groups the bound relied on: the budget, the deadline (and earliest start) if they removed
        quotes, and the capacities the greedy fill exhausted.
        """
        o = pt.option
        u = self.universe
        table = self.table(o)
        per = table.prices.totals(pt, cash)   # pt.per_node.total(q, cash) of every quote, the same floats
        within = _within_any_fill(per, pt.n, fixed, limit)
        out: Reasons = []
        variants: list[tuple[frozenset[str], int | None]] = [(frozenset(), None)]
        if u.deadline_day is not None:
            variants.append((frozenset({"schedule.deadline"}), 0))
            if self.problem.spec.schedule.earliest_start is not None:
                variants.append((frozenset({"schedule.deadline", "schedule.earliest_start"}), u.earliest_day))
        for base, earliest in variants:
            idx = np.arange(len(o.quotes))
            if earliest is not None:
                assert u.deadline_day is not None
                idx = np.flatnonzero(np.maximum(table.ready, max(o.ready_day, earliest)) + pt.days <= u.deadline_day)
            if len(idx) == 0:
                if base:
                    out.append(frozenset(base))
                continue
            if within:
                out += self._capacity_only(table, idx, pt.n, base)
                continue
            order = idx[np.lexsort((table.id_rank[idx], per[idx]))]   # sorted((total, id, capacity)) of each quote
            why, k = _fill_sorted(per[order], table.cap[order], pt.n, fixed, limit)
            caps = {table.cap_groups[j] for j in order[:k].tolist()}
            if why == "budget":
                out.append(frozenset(base | {"budget.max_usd"} | caps))
            elif why == "capacity" and base:
                out.append(frozenset(base | caps))
            elif why == "ok" and self.problem.spec.policy.max_fabrics == 1:
                out += self._per_fabric(table, order, per[order], pt.n, fixed, limit, base)
        return out

    def _capacity_only(self, table: "QuoteTable", idx: np.ndarray, n: int, base: frozenset[str]) -> Reasons:
        """The reasons of one variant of `_capacitated_budget` when no fill of n nodes can exceed the budget
        (`_within_any_fill`): what the fills there would find, without sorting the quotes by price.

        No fill is over budget, so each fill is decided by capacity alone: the cheapest fill holds n iff the quotes
        `idx` hold n in all (else the reason is `base` with all their capacities, as a fill that runs out relies on
        every one), and the per-fabric fills (one fabric per job) hold n iff one fabric does (else the fabric limit
        with all their capacities)."""
        cap = table.cap[idx]
        if int(cap.sum()) < n:
            return [base | {table.cap_groups[j] for j in idx.tolist()}] if base else []
        if self.problem.spec.policy.max_fabrics != 1 or len(idx) < 2:
            return []
        if table.distinct_fabrics:
            fabrics, widest = len(idx), int(cap.max())
        else:
            held = np.bincount(table.fabric[idx], weights=cap)
            fabrics, widest = int(np.count_nonzero(np.bincount(table.fabric[idx]))), int(held.max())
        if fabrics < 2 or widest >= n:
            return []
        return [base | {"policy.max_fabrics"} | {table.cap_groups[j] for j in idx.tolist()}]

    def table(self, o: Option) -> "QuoteTable":
        """The option's quotes as arrays (`QuoteTable`), made once per option: the budget reasons and the point
        bounds (`bounds.py`) read the same table."""
        got = self._tables.get(o.id)
        if got is None:
            a = self.problem.assumptions.values
            qs = o.quotes
            fabrics = sorted({q.fabric_id for q in qs})
            code = {f: k for k, f in enumerate(fabrics)}
            rank = np.empty(len(qs), dtype=np.int64)
            rank[np.argsort(np.array([q.id for q in qs], dtype=object), kind="stable")] = np.arange(len(qs))
            got = self._tables[o.id] = QuoteTable(
                [q.id for q in qs], rank, np.array([option_quote_ready(q, o, a) for q in qs], dtype=np.int64),
                np.array([q.max_nodes for q in qs], dtype=np.int64), np.array([code[q.fabric_id] for q in qs]),
                fabrics, price_table(o), [capacity_group(q.id) for q in qs], len(fabrics) == len(qs),
                np.array([q.kind == "estimate" for q in qs], dtype=bool))
        return got

    @staticmethod
    def _per_fabric(table: "QuoteTable", order: np.ndarray, per: np.ndarray, n: int, fixed: float, limit: float,
                    base: frozenset[str]) -> Reasons:
        """With one fabric per job, the cheapest fill within each fabric: when none fits the budget (or holds n),
        the budget (if it decided any), the fabric limit and every capacity relied on exclude the point. `order`
        holds the positions of the quotes in the option, cheapest first, and `per` their per-node totals. Where every
        fabric has one of them (each rented quote alone on its own), the fills are one comparison each, made over the
        array."""
        if len(order) < 2:
            return []
        fabric = table.fabric[order]
        fabrics = len(fabric) if table.distinct_fabrics else len(distinct(fabric))
        if fabrics < 2:
            return []
        items: set[str] = set(base) | {"policy.max_fabrics"}
        if fabrics == len(fabric):
            cap = table.cap[order]
            over = fixed + n * per > limit
            if np.any(~over & (cap >= n)):
                return []
            items.update([table.cap_groups[j] for j in order[~over].tolist()])
            if over.any():
                items.add("budget.max_usd")
            return [frozenset(items)]
        rows: dict[int, list[int]] = {}
        for pos, f in enumerate(fabric.tolist()):
            rows.setdefault(f, []).append(pos)   # positions in `order` by fabric, in price order, one pass
        for f in sorted(rows, key=lambda c: table.fabrics[c]):
            mine = order[rows[f]]
            why, k = _fill_sorted(per[rows[f]], table.cap[mine], n, fixed, limit)
            if why == "ok":
                return []
            items.update([table.cap_groups[j] for j in mine[:k].tolist()])
            if why == "budget":
                items.add("budget.max_usd")
        return [frozenset(items)]

    def excluded(self, pt: Point) -> bool:
        """Whether optimisation (every group enforced) can leave the point out of the model."""
        key = pt.key
        got = self._excluded.get(key)
        if got is None:
            known = self._violations.get(key)
            got = pt.n < self.facts(pt.option).min_nodes or bool(
                known if known is not None else self.violations(pt, capacitated=False))
            self._excluded[key] = got
        return got

    def findings(self, options: set[str]) -> ScreenFindings:
        """The point reasons found so far for these options' points, as plain data: a search on a forked process
        returns them with its answer (`solve/forked.py`), so that the parent's screen ends as a serial search
        leaves it. That matters beyond speed: an explanation prunes the points whose reasons are `known`."""
        def mine(memo: dict[tuple[str, int], Any]) -> dict[tuple[str, int], Any]:
            return {k: v for k, v in memo.items() if k[0] in options}
        return ScreenFindings(mine(self._local), mine(self._violations), mine(self._excluded))

    def adopt(self, found: ScreenFindings) -> None:
        """Take in findings another process made for this same problem and universe (see `findings`)."""
        self._local.update(found.local)
        self._violations.update(found.violations)
        self._excluded.update(found.excluded)

    def known(self, pt: Point) -> Reasons | None:
        """The point's full reasons if they were computed already (cheap membership test for explanations)."""
        return self._violations.get(pt.key)

    def reduction(self, o: Option, pts: list[Point], unit: int, protect: frozenset[str] = frozenset(), *,
                  every_limit: bool = True, among: np.ndarray | None = None, alone_exact: bool = False
                  ) -> list[np.ndarray] | None:
        """Per point of `pts`, which of the option's quotes the presolve of `reduce.py` keeps there (a mask over
        `o.quotes`); None when it keeps them all. Its per-point answers are kept (the pipeline builds a pair's model
        over growing sets of the same points). `among`: a mask of the quotes the model has, when not all of the
        option's (`reduce.reducer_for`); the presolve then looks only at them."""
        subset = None if among is None else tuple(q for q, keep in zip(o.quotes, among.tolist(), strict=True)
                                                  if keep)
        key = (o.id, unit, protect, every_limit, None if subset is None else frozenset(q.id for q in subset),
               alone_exact)
        if key not in self._reducers:
            self._reducers[key] = reducer_for(self.problem, o, unit, self.outlook, protect=protect,
                                              every_limit=every_limit, chance=self.chance, among=subset,
                                              alone_exact=alone_exact)
        reducer = self._reducers[key]
        if reducer is None:
            return None
        at = np.arange(len(o.quotes)) if among is None else np.flatnonzero(among)
        out = []
        for pt in pts:
            kept = self._kept.get((key, pt.n))
            if kept is None:
                kept = self._kept[(key, pt.n)] = at[reducer.kept(pt)]
            mask = np.zeros(len(o.quotes), dtype=bool)
            mask[kept] = True
            out.append(mask)
        return out


@dataclass(frozen=True)
class QuoteTable:
    """An option's quotes as arrays, in the option's order (`Screen.table`): ids and their sorted rank, ready day,
    capacity, fabric (a code into `fabrics`, sorted), prices, capacity groups, whether every quote is alone on its
    fabric, and which are estimates."""

    ids: list[str]
    id_rank: np.ndarray
    ready: np.ndarray
    cap: np.ndarray
    fabric: np.ndarray
    fabrics: list[str]
    prices: PriceTable
    cap_groups: list[str]
    distinct_fabrics: bool
    estimate: np.ndarray


def _prefix_runs(rows: tuple[tuple[int, str, int, str], ...]) -> tuple[list[int], list[int]]:
    """For every k: the capacity of the first k rows, and the most one fabric of them holds — one pass over the
    rows (a marketplace option has thousands, and its points ask for thousands of distinct k)."""
    totals, widest = [0], [0]
    per_fabric: dict[str, int] = {}
    total = best = 0
    for _longest, fabric, cap, _qid in rows:
        total += cap
        held = per_fabric[fabric] = per_fabric.get(fabric, 0) + cap
        best = max(best, held)
        totals.append(total)
        widest.append(best)
    return totals, widest


def _within_any_fill(per: np.ndarray, n: int, fixed: float, limit: float) -> bool:
    """Whether every fill of n nodes from these quotes stays within `limit`: it prices n nodes, each at most the
    dearest per-node total, on top of `fixed`. The margin (a billionth of the limit) keeps the answer that of the
    fills' own sums, which add the same floats in another order."""
    return len(per) > 0 and fixed + n * float(per.max()) <= limit - 1e-9 * max(1.0, abs(limit))


def _fill_sorted(per: np.ndarray, cap: np.ndarray, n: int, fixed: float, limit: float) -> tuple[str, int]:
    """The cheapest fill of n nodes from quotes sorted cheapest per node first (per-node price, capacity): ("budget",
    k) when even it exceeds `limit`, the capacities relied on being those of the first k — bound_k fills the k
    cheapest to capacity and the rest at the (k+1)-th price, non-decreasing in k, so the first k over budget needs
    only those k; ("capacity", all) when they cannot hold n; ("ok", 0) otherwise.

    Before the quote that completes n every quote is taken whole, so the k-th test sees n − (capacity of the first
    k) nodes left and the money spent on them, summed one quote at a time from `fixed`."""
    if len(per) == 0:
        return "capacity", 0
    held = np.concatenate(([0], np.cumsum(cap)[:-1]))
    spent = np.cumsum(np.concatenate(([fixed], cap * per)))[:-1]
    live = held < n
    over = live & (spent + (n - held) * per > limit)
    full = held + cap >= n
    first_over = int(np.argmax(over)) if over.any() else len(per)
    first_full = int(np.argmax(full)) if full.any() else len(per)
    if first_over <= first_full and first_over < len(per):
        return "budget", first_over
    if first_full < len(per):
        return "ok", 0
    return "capacity", len(per)
