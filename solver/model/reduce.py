"""Presolve: the quotes each point of an option never needs, given no variable there before CP-SAT sees the model.

A marketplace catalog offers the same system many times over. A plan is one point (an option at n nodes), and at
that point most quotes are beaten by another on everything that can matter. Dropping them is a *reduction with a
proof*: for every plan that uses a dropped quote q there is a plan at the same point, no worse and no less
feasible, that uses kept quotes instead. Two rules, both per point, so capacities are compared with n and prices are
those of that point:

- **R1 (exact plans).** With one fabric per job enforced, a rented quote alone on its fabric is used alone, so its
  plan at n nodes is a constant: cost and cash in money units (n × the per-node terms, its lateness charge alone,
  the rules' percentages, as `solve/brute.py` counts them), the planned start, estimate or not.
  Quotes off the Pareto front of those plans — or that cannot supply n alone — are dropped. Any quote that can
  supply n alone may be the dominator (the plan that uses only it is one fabric too).
- **R2 (moving nodes).** d is no worse than q when it is ready no later (so the planned start never moves later),
  its capacity arrives no later in distribution (`_arrives_no_later`: its delivery's distribution function is at
  least q's at every whole day that can matter — then replacing q by d makes the plan's start, the latest of
  independent arrivals, no later in distribution, so its lateness and its chance of the deadline no worse), a
  purchase is priced no higher and can be ordered no later (so it never waits longer), it is not an estimate unless q
  is, and at this point its per-node cost and cash are no higher. A bought q must be ordered just in time at every
  start the point can have (one ordered on its last valid day arrives on its own clock).
  q's nodes fit on its dominators when (a) one can supply n alone (minimum no larger), on q's fabric or with q alone
  on its own (its fabric is freed as d's is taken); (b) with one fabric per job and q alone on its fabric, one holds
  min(q's capacity, n); or (c) those on q's fabric with no minimum size hold n together (the plan's other nodes on
  them are at most n − x_q, so x_q more fit).

Quotes are examined cheapest first against the ones kept so far, so the moves can be made one dropped quote at a
time in any plan. Rules that name a quote are outside the argument (such quotes are never dropped nor dominators);
a rule that tests the plan's cost switches the reduction off. A rule that lowers it (a discount: a negative
`add_pct`) leaves R1 only: R1 prices each quote's plan with the rules' percentages term by term as the model does,
so its comparison is the model's; the moves of R2 and R3 compare per-node prices in dollars, which a discount taken
per quote and rounded up in the model's unit can leave a unit out of order.

With `policy.deadline_confidence` only R1 is used, as before the start laws were exact (the joint constraints of
sets of quotes are cuts the reduction does not see). A plan that uses one quote alone meets the confidence or not as
a whole: the model holds its start to at most F*(point, quote) (`estimate/chance.py`), so a quote that misses it
when started on its own floor is never used at the point, and among the quotes that meet it the Pareto argument of
R1 holds unchanged.

Explanation models (`every_limit=False`, any group may be switched off) use R2 without (b), its arrivals compared
from the earliest day any floor allows: both hold whatever groups are active, so a conflict or a relaxation found on
the reduced model is one of the full model. An explanation model solved once under known groups that enforce all R1
relies on (`r1_holds`: a budget's or a deadline's relaxation, with everything else enforced) uses R1 too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..estimate.delivery import order_by_day
from ..estimate.options import Option, Point, option_quote_ready
from ..estimate.starts import arrival_cdfs
from ..inputs.problem import Problem
from ..inputs.rules import delay_days, matches_attrs, matches_point, quote_ids, rule_group
from .groups import capacity_group
from .money import kept_share
from .prices import price_table
from .timing import Timing, rule_delays, timing, wait_of

if TYPE_CHECKING:
    from ..estimate.chance import ChanceModel
    from ..estimate.outlook import Outlook
    from ..inputs.catalog import Quote


def reducer_for(problem: Problem, o: Option, unit: int, outlook: "Outlook", *, protect: frozenset[str] = frozenset(),
                every_limit: bool = True, chance: "ChanceModel | None" = None,
                among: "tuple[Quote, ...] | None" = None, alone_exact: bool = False) -> "PointReducer | None":
    """The option's reducer, or None where the argument does not hold (see the module docstring): one quote,
    a rule that tests the plan's cost, a deadline confidence or a discount where R1 does not apply.
    `among` limits it to some of the option's quotes, when the model has no others (the rest cannot be used at any
    of its points): the argument then holds for the problem with those quotes alone, whose plans are the model's.
    `alone_exact`: an explanation model solved under groups that enforce everything R1 relies on (`r1_holds`), so R1
    applies to it as to optimisation."""
    rules = problem.spec.rules
    quotes = o.quotes if among is None else among
    if len(quotes) < 2 or any(r.when.cost is not None for r in rules):
        return None
    alone = problem.spec.policy.max_fabrics == 1 and o.mode != "buy"
    if chance is not None and not (every_limit and alone):
        return None
    if discounted(problem) and not ((every_limit or alone_exact) and alone):
        return None   # R1 alone is left, and it does not hold here
    return PointReducer(problem, o, unit, outlook, protect=protect, every_limit=every_limit, quotes=quotes,
                        chance=chance, alone_exact=alone_exact)


def discounted(problem: Problem) -> bool:
    """Whether a rule can lower a plan's cost (a negative `add_pct`): then only R1 is used (module docstring)."""
    return kept_share(problem) < 1.0


def r1_holds(problem: Problem, o: Option, active: "frozenset[str]") -> bool:
    """Whether a model solved with exactly the groups `active` enforced meets R1's premises for option `o`: one
    fabric per job (`policy.max_fabrics` of 1, enforced), every quote's capacity enforced (a plan alone on a quote
    holds at most its nodes), the earliest start enforced when there is one (a plan's planned start, hence its
    lateness, is its floor), and every rule enforced (the delays and surcharges R1 prices apply). The budget, the
    deadline, the site and the other limits do not enter R1: it compares plans at one point on cost, cash, floor and
    estimate, and drops only what another plan beats on all four."""
    spec = problem.spec
    earliest = spec.schedule.earliest_start
    return spec.policy.max_fabrics == 1 and o.mode != "buy" and "policy.max_fabrics" in active \
        and (earliest is None or (earliest - problem.as_of).days <= 0 or "schedule.earliest_start" in active) \
        and all(rule_group(r.name) in active for r in spec.rules) \
        and all(capacity_group(q.id) in active for q in o.quotes)


class PointReducer:
    """The per-point reduction of one option (rules R1–R3 of the module docstring), over its quotes as arrays.

    At one point every plan uses n nodes, so the covering argument needs capacity for n, not for the option's
    largest point, and only that point's prices: a quote beaten at the points a job would choose is dropped at those
    points alone.
    """

    def __init__(self, problem: Problem, o: Option, unit: int, outlook: "Outlook", *, protect: frozenset[str],
                 every_limit: bool,
                 quotes: "tuple[Quote, ...] | None" = None, chance: "ChanceModel | None" = None,
                 alone_exact: bool = False) -> None:
        a = problem.assumptions.values
        self.problem, self.o, self.unit, self.every_limit, self.chance = problem, o, unit, every_limit, chance
        spec = problem.spec
        named = {qid for r in spec.rules for qid in (quote_ids(r.when) or [])} | protect
        self.quotes = list(o.quotes if quotes is None else quotes)
        qs = self.quotes
        fabric_count: dict[str, int] = {}
        for q in qs:
            fabric_count[q.fabric_id] = fabric_count.get(q.fabric_id, 0) + 1
        self.named = np.array([q.id in named for q in qs])
        self.ready = np.array([option_quote_ready(q, o, a) for q in qs])
        self.floor = np.maximum(self.ready, o.ready_day)
        self.est = np.array([q.kind == "estimate" for q in qs], dtype=np.int8)
        self.cap = np.array([q.max_nodes for q in qs])
        self.least = np.array([q.min_nodes for q in qs])
        self.alone = np.array([fabric_count[q.fabric_id] == 1 for q in qs])
        self.exact = (every_limit or alone_exact) and spec.policy.max_fabrics == 1 and o.mode != "buy"
        self.moves = chance is None and not discounted(problem)
        """Whether R2 and R3 (moving nodes between quotes) apply: not under a deadline confidence or a discount."""
        self._lates: dict[tuple[int, int], np.ndarray] = {}
        self._offer: _Offers | None = None
        self._timings: list[Timing] | None = None
        self._starts: dict[int, list[int]] = {}
        self._arrivals: np.ndarray | None = None
        self._wait_rows: dict[int, np.ndarray] = {}
        self.earliest = (problem.earliest_start - problem.as_of).days \
            if spec.schedule.earliest_start is not None else 0
        self.deadline_day = (spec.schedule.deadline - problem.as_of).days \
            if spec.schedule.deadline is not None else None
        fabrics = sorted(fabric_count)
        fabric_index = {f: k for k, f in enumerate(fabrics)}
        self.fabric = np.array([fabric_index[q.fabric_id] for q in qs])
        self.table = price_table(o, qs)
        self.prices = self.table.prices
        self._index = {q.id: k for k, q in enumerate(o.quotes)}
        self._positions = np.array([self._index[q.id] for q in qs], dtype=np.int64)
        """Each of `quotes`' position among the option's (what `Outlook.alone` answers over)."""
        self.outlook = outlook
        self._option_ready: np.ndarray | None = None
        self._rows = np.zeros(0, dtype=np.int64)

    def timings(self) -> list[Timing]:
        if self._timings is None:
            self._timings = [timing(self.problem, self.o, q) for q in self.quotes]
        return self._timings

    def starts(self, delay: int) -> list[int]:
        """Every planned start F a plan of this option can have with rule delays `delay`: F is the latest of its
        floors — the earliest start, the option's ready day + delay, each used quote's ready day + delay — and,
        the deadline being enforced where R3 is used, no later than the deadline less the shortest run."""
        got = self._starts.get(delay)
        if got is None:
            values = {int(f) + delay for f in self.floor} | {self.o.ready_day + delay}
            if self.problem.spec.schedule.earliest_start is not None:
                values = {max(v, self.earliest) for v in values}
            shortest = min((pt.days for pt in self.o.points if pt.workable), default=0)
            got = sorted(v for v in values if self.deadline_day is None or v + shortest <= self.deadline_day)
            self._starts[delay] = got
        return got

    def wait_days(self, delay: int) -> np.ndarray:
        """days[f, r]: how long quote r's hardware waits for the f-th of `starts(delay)` (0 for most)."""
        got = self._wait_rows.get(delay)
        if got is None:
            got = np.array([[wait_of(t, f) for t in self.timings()] for f in self.starts(delay)], dtype=np.int64)
            self._wait_rows[delay] = got
        return got

    def _late(self, pt: Point, delay: int) -> np.ndarray:
        """Each quote's lateness charge (dollars) in a plan at `pt` that uses it alone with rule delays `delay`,
        planned on its own floor (`Outlook.alone`, as the model and `brute.py` count it)."""
        key = (pt.n, delay)
        got = self._lates.get(key)
        if got is None:
            dollars = self.outlook.alone(self.o, pt, delay, earliest=self.every_limit or self.earliest <= 0)
            got = self._lates[key] = dollars[self._positions]
        return got

    def dropped(self, pt: Point) -> frozenset[str]:
        """The quotes point `pt` never needs (`kept`'s complement, by id)."""
        kept = set(self.kept(pt).tolist())
        return frozenset(q.id for k, q in enumerate(self.quotes) if k not in kept)

    def kept(self, pt: Point) -> np.ndarray:
        """The positions (in `quotes`, ascending) of the quotes point `pt` may need: R1 where its exact conditions
        hold, then R2 on the rest, drop the others. Positions, not ids: with a marketplace catalog a point keeps a
        few of thousands of quotes, and the model is built from the few."""
        cost, cash = (self._per_node(pt, view) for view in (False, True))
        gone = np.zeros(len(self.quotes), dtype=bool)
        if self.exact:
            gone = self._alone_pareto(pt, cost, cash)
        if self.moves:
            gone |= self._covered_at(pt, cost, cash, gone)
        return np.flatnonzero(~gone)

    def _per_node(self, pt: Point, cash: bool) -> np.ndarray:
        """Each quote's per-node cost (or cash) at `pt`: t0 + price × t1 of its price key, the floats of `PerNode`."""
        return self.table.totals(pt, cash)

    def _rules_at(self, pt: Point) -> tuple[int, list[float]]:
        """(delay days, add_pct percentages) of the rules without a quote condition that apply at `pt`."""
        delay, pcts = 0, []
        for rule in self.problem.spec.rules:
            then = rule.then
            if isinstance(then, str) or rule.when.quote is not None or not matches_attrs(rule.when, self.o.attrs) \
                    or not matches_point(rule.when, pt.gpus, pt.n, pt.days, pt.power_kw):
                continue
            delay += delay_days(then)
            if then.add_pct:
                pcts.append(then.add_pct)
        return delay, pcts

    def _alone_pareto(self, pt: Point, cost: np.ndarray, cash: np.ndarray) -> np.ndarray:
        """R1: with one fabric per job, a quote alone on its fabric is used alone, so its plan at this point is
        a constant — cost and cash in units (with its lateness and the rules' percentages), planned start, estimate or
        not.
        Quotes off the Pareto front of those plans (or that cannot supply n alone) are dropped here."""
        n, unit = pt.n, self.unit
        delay, pcts = self._rules_at(pt)
        whole = pt.fixed.total_cost + n * cost   # the model's charge of a plan alone (`builder.plan_units`)
        cost_u = _units(whole + self._late(pt, delay), unit)
        for pct in pcts:
            cost_u = cost_u + _units(whole * pct / 100.0, unit)
        cash_u = _units(pt.fixed.total_cash + n * cash, unit)
        valid = (self.least <= n) & (n <= self.cap) & ~self.named
        if self.chance is not None and pt.time is not None and valid.any():
            valid &= self._meets_alone(pt, delay)
        gone = self.alone & ~self.named & ~valid
        idx = np.flatnonzero(valid)
        if len(idx) == 0:
            return gone
        order = idx[np.lexsort((idx, self.est[idx], self.floor[idx], cash_u[idx], cost_u[idx]))]
        live = np.ones(len(order), dtype=bool)
        c, k, f, e = cost_u[order], cash_u[order], self.floor[order], self.est[order]
        for j in range(len(order)):
            if not live[j]:
                continue
            beaten = (c >= c[j]) & (k >= k[j]) & (f >= f[j]) & (e >= e[j])
            beaten[j] = False
            live &= ~beaten
        dominated = order[~live]
        gone[dominated[self.alone[dominated]]] = True
        return gone

    def _meets_alone(self, pt: Point, delay: int) -> np.ndarray:
        """Whether each quote, used alone at this point and started on its own floor (the earliest start, the
        option's and the quote's ready day, each plus the rules' delays), meets the deadline's confidence — the
        latest start the model allows it (`ChanceModel.meets_alone`, which keeps its scenarios per option and start
        days: these are the start days the bounds ask about)."""
        assert self.chance is not None
        o = self.o
        base = max(o.ready_day + delay, self.earliest)
        if self._option_ready is None:
            a = self.problem.assumptions.values
            self._option_ready = np.array([option_quote_ready(q, o, a) for q in o.quotes], dtype=np.int64)
            self._rows = np.array([self._index[q.id] for q in self.quotes], dtype=np.int64)
        starts = np.maximum(base, self._option_ready + delay)
        return self.chance.meets_alone(o, pt, starts, self._rows)

    def _covered_at(self, pt: Point, cost: np.ndarray, cash: np.ndarray, gone: np.ndarray) -> np.ndarray:
        """R2: pairwise dominance at this point's prices (`_no_worse` for the rest), with room for n nodes: quotes
        examined cheapest first, each against the ones kept so far."""
        n = pt.n
        out = np.zeros(len(self.quotes), dtype=bool)
        live = [j for j in range(len(self.quotes)) if not gone[j] and not self.named[j]
                and not (self.exact and self.alone[j])]
        if len(live) < 2:
            return out
        live.sort(key=lambda j: (cost[j], int(self.ready[j]), self.quotes[j].id))
        one_fabric = self.every_limit and self.problem.spec.policy.max_fabrics == 1
        kept: list[int] = []
        at = _AtStart(self, pt) if self.every_limit else None
        latest = self._latest_start(pt)
        for j in live:
            k = np.array(kept, dtype=np.int64)
            doms = k[self._no_worse(k, j, latest) & (cost[k] <= cost[j]) & (cash[k] <= cash[j])]
            if self._holds(j, doms, n, one_fabric) or (at is not None and at.covered(j, k, cost, cash, one_fabric)):
                out[j] = True
            else:
                kept.append(j)
        return out

    def _offers(self) -> "_Offers":
        """Each quote's lead time (p50, p90) and order-by day, as arrays for `_no_worse`; made on first use."""
        if self._offer is None:
            qs = self.quotes
            buy = self.o.mode == "buy"
            self._offer = _Offers(
                p50=np.array([q.lead_time_days for q in qs], dtype=float),
                p90=np.array([q.lead_time_p90_days if q.lead_time_p90_days is not None else q.lead_time_days
                              for q in qs], dtype=float),
                order=np.array([(d if (d := order_by_day(q, self.problem.as_of)) is not None else np.inf)
                                if buy else np.inf for q in qs], dtype=float),
                buy=buy)
        return self._offer

    def _no_worse(self, k: np.ndarray, j: int, latest: int) -> np.ndarray:
        """Which quotes of `k` are no worse than quote j on everything but the per-node prices: ready no later, not
        an estimate unless j is, arriving no later in distribution (`_arrives_no_later`), and for a purchase priced no
        higher and orderable no later. Column by column against the quotes kept so far (a quotes × quotes matrix of a
        marketplace option is 10⁸ cells)."""
        a = self._offers()
        out = (self.ready[k] <= self.ready[j]) & (self.est[k] <= self.est[j])
        if a.buy:
            out &= (self.prices[k] <= self.prices[j]) & (a.order[k] >= a.order[j])
        if out.any():
            out &= self._arrives_no_later(k, j, latest)
        return out

    def _arrives_no_later(self, k: np.ndarray, j: int, latest: int) -> np.ndarray:
        """Whether each quote of `k`, put in quote j's place in any plan of this point planned to start no later than
        `latest`, makes the plan's start no later in distribution.

        The start is the latest of independent arrivals (`estimate/starts.py`), so it suffices that each one's
        arrival is no later in distribution than j's: P(arrival ≤ x) at least j's at every whole day x from the
        earliest a start can be. Rented capacity is requested on the same day whichever quote it comes from, so that
        compares the lead times' distribution functions from that day on (the rules' delays at most shift both). A
        purchase ordered just in time arrives its lead time less its ready offset after the planned start, and the
        new plan's start is no later (k is ready no later), so that compares lead time less offset; a j that may be
        ordered on its last valid day instead (`latest` past it) arrives on its own clock, and is never replaced."""
        a = self._offers()
        if a.buy and a.order[j] < np.inf and a.order[j] + self.ready[j] < latest:
            return np.zeros(len(k), dtype=bool)
        rows = self._arrival_rows()
        return np.all(rows[k] >= rows[j] - 1e-12, axis=1)

    def _arrival_rows(self) -> np.ndarray:
        """rows[quote, m]: P(its capacity is usable within m whole days), on one grid of days for every quote —
        rented: of its request; bought: of its just-in-time order less its ready offset — from the first day that can
        matter (`_arrives_no_later`) to the last any arrives."""
        if self._arrivals is None:
            out = self.outlook
            qs = self.quotes
            buy = self.o.mode == "buy"
            arrivals = [out.arrival(self.o, q, -int(self.ready[r]) if buy else 0) for r, q in enumerate(qs)]
            if buy:   # relative to the planned start: any day can matter
                lo = min(x.first for x in arrivals)
            else:     # a rented arrival matters from the first floor a start can have, less every rule delay
                floor = max(self.earliest if self.every_limit else 0,
                            max(0, (self.o.accel.available_from.value - self.problem.as_of).days))
                lo = max(floor - sum(rule_delays(self.problem)), min(x.first for x in arrivals))
            hi = max([lo] + [x.last for x in arrivals])
            days = np.arange(lo, hi + 1, dtype=float)
            self._arrivals = arrival_cdfs(arrivals, days, lo)
        return self._arrivals

    def _latest_start(self, pt: Point) -> int:
        """The latest planned start a plan at `pt` can have: with the deadline enforced, the deadline less its days;
        otherwise unbounded."""
        if self.every_limit and self.deadline_day is not None:
            return self.deadline_day - pt.days
        return 10 ** 9

    def _holds(self, j: int, doms: np.ndarray, n: int, one_fabric: bool) -> bool:
        """Whether q's nodes at n fit on its dominators `doms` (rules (a)–(c) of the module docstring)."""
        if len(doms) == 0:
            return False
        same = self.fabric[doms] == self.fabric[j]
        alone = bool(self.alone[j])
        small = self.least[doms] <= self.least[j]
        if np.any(small & (self.cap[doms] >= n) & (same | alone)):
            return True
        if one_fabric and alone and np.any(small & (self.cap[doms] >= min(int(self.cap[j]), n))):
            return True
        return int(self.cap[doms][same & (self.least[doms] <= 1)].sum()) >= n


@dataclass(frozen=True)
class _Offers:
    """An option's quotes' lead times and order-by days (`PointReducer._offers`), in the reducer's order."""

    p50: np.ndarray
    p90: np.ndarray
    order: np.ndarray
    buy: bool


class _AtStart:
    """R3 (optimisation only): dominance judged at each planned start F a plan using quote q can have.

    At a given F the plan's usable quotes are those ready by F, and a bought node's cost of waiting is its quote's at
    F. So q's nodes may move to kept quotes ready by F that arrive no later in distribution (`_arrives_no_later`),
    no dearer per node (and no dearer to wait) at this point, not estimates unless q is, when they hold n (as
    `_holds`). If that is so at every F from q's own floor on, q is never needed here. Removing q can only lower F,
    which orders bought hardware earlier and waits less. All starts at once: one array operation per quote."""

    def __init__(self, red: "PointReducer", pt: Point) -> None:
        self.red, self.pt = red, pt
        self.delay = red._rules_at(pt)[0]
        starts = red.starts(self.delay)
        deadline = red.deadline_day
        self.rows = len(starts) if deadline is None else sum(1 for f in starts if f + pt.days <= deadline)
        """Only starts from which this point can still finish by the deadline (optimisation enforces it)."""
        self.starts = np.array(starts[:self.rows], dtype=np.int64)
        self.wait = self._waits() if red.o.mode == "buy" else None

    def _waits(self) -> tuple[np.ndarray, np.ndarray]:
        """Per node (cost, cash) of each bought quote's wait at each start (`timing.wait_of`), priced only where
        a quote must wait at all."""
        days = self.red.wait_days(self.delay)[:self.rows]
        cost, cash = np.zeros(days.shape), np.zeros(days.shape)
        for f, r in zip(*np.nonzero(days), strict=True):
            cost[f, r], cash[f, r] = self.pt.per_node.waited(self.red.quotes[r].id, int(days[f, r]))
        return cost, cash

    def _no_dearer(self, first: int, k: np.ndarray, j: int, per_node: np.ndarray, view: int = 0) -> np.ndarray:
        """[start from the `first`-th on, kept quote]: its node plus its wait at that start costs (or pays) no more
        than quote j's, in the model's money units. Node and wait are rounded up term by term, so where a wait is
        involved the dollar sums are compared two units apart (⌈a⌉ + ⌈b⌉ ≤ ⌈a + b⌉ + 1 ≤ ⌈c⌉ + ⌈d⌉ − 1 + 1)."""
        base = per_node[k][None, :] <= per_node[j]
        if self.wait is None:
            return np.broadcast_to(base, (len(self.starts) - first, len(k)))
        w = self.wait[view][first:]
        wk, wj = w[:, k], w[:, j][:, None]
        waiting = (wk > 0) | (wj > 0)
        summed = per_node[k][None, :] + wk + 2 * self.red.unit <= per_node[j] + wj
        return np.where(waiting, summed, base)

    def covered(self, j: int, k: np.ndarray, cost: np.ndarray, cash: np.ndarray, one_fabric: bool) -> bool:
        red, n = self.red, self.pt.n
        floor = max(red.earliest, int(red.floor[j]) + self.delay)
        first = int(np.searchsorted(self.starts, floor))  # the starts (ascending) from q's floor on
        if first == len(self.starts):
            return True  # no start from q's floor finishes in time: no plan at this point can use q
        if len(k) == 0:
            return False
        fs = self.starts[first:]
        ready = (red.floor[k] + self.delay)[None, :] <= fs[:, None]
        later = red._arrives_no_later(k, j, int(fs[-1]))
        ok = ((red.est[k] <= red.est[j]) & later)[None, :] & ready
        ok &= self._no_dearer(first, k, j, cost) & self._no_dearer(first, k, j, cash, view=1)
        same = red.fabric[k] == red.fabric[j]
        alone = bool(red.alone[j])
        small = red.least[k] <= red.least[j]
        held = (ok & (small & (red.cap[k] >= n) & (same | alone))[None, :]).any(axis=1)
        if one_fabric and alone:
            held |= (ok & (small & (red.cap[k] >= min(int(red.cap[j]), n)))[None, :]).any(axis=1)
        held |= (ok & (same & (red.least[k] <= 1))[None, :]) @ red.cap[k] >= n
        return bool(held.all())


def _units(dollars: np.ndarray, unit: int) -> np.ndarray:
    """`money.units` over an array (the same rounding: up, with the same tolerance)."""
    return np.ceil(dollars / unit - 1e-9).astype(np.int64)


__all__ = ["PointReducer", "reducer_for"]
