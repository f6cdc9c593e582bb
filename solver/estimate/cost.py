"""Cost model: what finishing the training costs, by procurement mode, as named line items in dollars.

Two views of the same plan:
- **cost** (the objective, "risk-adjusted completion cost"): what this run consumes. Bought hardware is held from
  delivery to the end of the run and charged the value it loses in that time (`policy.after_run`: sold afterwards
  at its resale value, reused at straight-line depreciation, or left idle and written off), plus the hall, the
  money tied up in it and its support contracts for the time held; rented capacity is billed for the hours used
  or its whole committed term; plus energy, engineering and premiums for what can go wrong.
- **cash** (what `budget.max_usd` limits by default): what is paid or committed — bought hardware in full,
  support contracts, colocation rent, bills, energy, engineering, rule surcharges. Resale proceeds (they come back
  after the run), the cost of capital and the amortisation of your own hall are not cash; premiums are not cash.

Line items (dollars):
  compute           buy: the servers (in full for resell/idle, the depreciation of the time held for reuse);
                    cloud: GPU-hours × rate, billed at least commit_months; managed: months × monthly price
  network_storage   buy: the cluster network, network fraction × server price, charged like the servers (clusters
                    of more than one node; the key keeps its name for the JSON contract: storage is `storage`)
  spares            hot spares, s = spare_nodes_pct/100 of a multi-node plan's nodes (policy.spare_nodes_pct, else
                    reliability.spare_nodes_pct), priced as the plan's own nodes for the run as expected:
                    cloud s × GPU-hours billed × rate, managed s × months × price, buy s × (the hardware's loss of
                    value + capital + support + hall for the time held); s × compute's premiums too
  resale_credit     buy, resell: −(servers + network) × resale fraction at the age reached (cost only)
  capital           buy: (servers + network) × annual cost of capital × years held (cost only)
  deposit_capital   buy: the deposit paid at order (`money.deposit_pct`, or the quote's own, of the servers, their
                    network and hot spares) × annual cost of capital × (delivery − order days) / 365: the money a
                    long lead time ties up before the hardware arrives (`payments.py`; cost only; the
                    estimated-price premium is not charged on it, its CVaR price tail is)
  support           buy: (servers + network) × support % per year × years held
  facility          buy: node IT kW × hall cost per kW-month × months held (cash only for a colocation cage)
  energy            buy: node kW × PUE × hours × $/kWh (cloud and managed prices include power)
  storage           (kept checkpoints + dataset) TB × $/TB-month of the provider class × months of the run
                    (`checkpoints.py`): rented per node of each quote (the plan's figure ÷ its nodes, at the
                    quote's provider's rate), owned per plan (your parallel file system)
  data_transfer     dataset GB × (its source's egress + the provider's ingress) + kept checkpoints GB × the
                    provider's egress (`checkpoints.py`), placed as storage
  orchestration     nodes × $/node-month of scheduler and observability × months of the run
  porting           engineer-weeks for the software stack × engineer cost
  operations        (base + per-1000-GPU) engineers × months of training × engineer cost
  recovery          expected interruptions (λ × run hours) × engineer hours per failure, + the hardware share of
                    them × your own hours to replace a node (bought: a technician's swap), × the engineer-hour
  failure_rework    the part of every time-proportional line caused by expected interruptions
  throughput        the mean of every line over the run scenarios (achieved MFU, interruption counts) less the
                    planned figure: what the spread of the run's length is expected to add (`options.py`)
  lateness          the price of a day past the deadline × the expected days late (`outlook.py`)
  consumer_risk     % of the hardware loss for consumer cards (no ECC, datacenter use voids warranty; [seed-000])
  estimate_price    % of the price-driven cost resting on an estimated price

"Held" is delivery to the end of the run: install + any wait for the start + the run. Sources
(catalogs/bibliography.yaml): each assumption carries its own; the structure follows [seed-001] ("cost per
successful checkpoint" includes engineer time to recover failures), the usual cloud bill (rate × hours), the TCO
energy term (IT kW × PUE × hours × tariff), and the holding-cost view of owning (capital, facility, support, loss of
value) of [bud-tco]; the checkpoint lines (spares, storage, data_transfer, orchestration, recovery) follow
[seed-001]'s cost of a successful checkpoint, with sources in catalogs/assumptions.yaml (reliability, money, data).
Storage, transfers, orchestration and engineering are cash in every mode (bills, or payroll).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from ..inputs.assumptions import MoneyA, ReliabilityA
from ..inputs.units import HOURS_PER_MONTH
from .checkpoints import DataCost

HOURS_PER_YEAR = 8760.0
RISK_LINES = ("lateness", "consumer_risk", "estimate_price", "tail")
"""Premiums for what may happen: cost, never cash."""
LINE_ORDER = ("compute", "network_storage", "spares", "resale_credit", "capital", "deposit_capital", "support",
              "facility", "energy",
              "storage", "data_transfer", "orchestration", "porting", "operations", "recovery", "failure_rework",
              "throughput", "lateness", "consumer_risk", "estimate_price", "tail", "rules")
Z90 = 1.2815515655446004
"""The standard normal quantile at 0.9: a lognormal through p50 and p90 has σ = ln(p90/p50) / Z90."""


@dataclass
class Lines:
    """Named dollar amounts; `cash` is the subset of spending that counts against a cash budget."""

    cost: dict[str, float] = field(default_factory=dict)
    cash: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, amount: float, *, cash: float | None = None) -> None:
        self.cost[name] = self.cost.get(name, 0.0) + amount
        if name not in RISK_LINES:
            self.cash[name] = self.cash.get(name, 0.0) + (amount if cash is None else cash)

    def scaled(self, k: float) -> "Lines":
        return Lines({n: v * k for n, v in self.cost.items()}, {n: v * k for n, v in self.cash.items()})

    def merged(self, other: "Lines") -> "Lines":
        out = Lines(dict(self.cost), dict(self.cash))
        for n, v in other.cost.items():
            out.cost[n] = out.cost.get(n, 0.0) + v
        for n, v in other.cash.items():
            out.cash[n] = out.cash.get(n, 0.0) + v
        return out

    @property
    def total_cost(self) -> float:
        return sum(self.cost.values())

    @property
    def total_cash(self) -> float:
        return sum(self.cash.values())


class Totals(Lines):
    """Only the two sums of a `Lines` (`into=` of the line functions): what screening most points needs, without
    building the named lines. The same formulas run; only the bookkeeping is lighter."""

    def __init__(self) -> None:
        super().__init__()
        self._cost = 0.0
        self._cash = 0.0

    def add(self, name: str, amount: float, *, cash: float | None = None) -> None:
        self._cost += amount
        if name not in RISK_LINES:
            self._cash += amount if cash is None else cash

    @property
    def total_cost(self) -> float:
        return self._cost

    @property
    def total_cash(self) -> float:
        return self._cash


def depreciation_fraction(holding_hours: float, money: MoneyA) -> float:
    """Share of capex charged for holding hardware `holding_hours`: straight line down to the residual value,
    which the owner keeps (so at most 1 − residual is ever charged)."""
    life_hours = money.depreciation_years * 365.0 * 24.0
    return min(1.0, holding_hours / life_hours) * (1.0 - money.residual_fraction)


def resale_fraction(age_years: float, money: MoneyA) -> float:
    """Fraction of the purchase price recovered by selling at this age: the sourced curve
    `money.resale_value_by_age_years`, linear between its ages and flat after the last."""
    curve = sorted(money.resale_value_by_age_years.items())
    if age_years <= curve[0][0]:
        return curve[0][1]
    for (a0, v0), (a1, v1) in zip(curve, curve[1:], strict=False):
        if age_years <= a1:
            return v0 + (v1 - v0) * (age_years - a0) / (a1 - a0)
    return curve[-1][1]


@dataclass(frozen=True)
class Owning:
    """How the problem charges bought hardware beyond its price: what happens after the run, and the hall."""

    after_run: str
    facility_usd_per_kw_month: float
    facility_is_cash: bool


def charged_share(hours_held: float, after_run: str, money: MoneyA) -> float:
    """Share of the hardware price booked as compute for holding it this long (resale is credited apart)."""
    return depreciation_fraction(hours_held, money) if after_run == "reuse" else 1.0


def credited_share(hours_held: float, after_run: str, money: MoneyA) -> float:
    """Share of the hardware price that comes back after the run (resell only)."""
    return resale_fraction(hours_held / HOURS_PER_YEAR, money) if after_run == "resell" else 0.0


Term = tuple[str, float, float, float, float]
"""(line, cost per dollar of price, cost at price 0, cash per dollar of price, cash at price 0): a line is affine
in the price."""


def spare_fraction(nodes: int, spare_nodes_pct: float) -> float:
    """s: hot spares per node of a plan, `spare_nodes_pct` / 100 for a multi-node cluster; a single box keeps none
    (as it has no cluster network and no operations base). Fractional: the share of a spare each node carries."""
    return spare_nodes_pct / 100.0 if nodes > 1 else 0.0


def deposit_capital_per_dollar(*, nodes: int, spares: float, deposit_share_days: float, money: MoneyA) -> float:
    """Cost of capital of one node's deposit per dollar of its price: the hardware bought with it, (1 + f)(1 + s)
    (f the network share of a multi-node cluster, s the hot spares per node), × the deposit share d × the days L
    from order to delivery (`deposit_share_days` = d × L, `payments.deposit_share_days`) × cost of capital %/yr
    / 365. Independent of the run's length: the deposit is paid before the run."""
    if deposit_share_days <= 0:
        return 0.0
    hw = 1.0 + (money.network_capex_fraction if nodes > 1 else 0.0)
    return hw * (1.0 + spares) * deposit_share_days * money.cost_of_capital_pct_per_year / 100.0 / 365.0


def buy_node_terms(*, nodes: int, ideal_hours: float, wall_hours: float, install_days: float, wait_days: float,
                   node_kw: float, pue: float, usd_per_kwh: float, money: MoneyA, owning: Owning, consumer: bool,
                   estimate: bool, spares: float = 0.0, deposit_share_days: float = 0.0) -> list[Term]:
    """Per-node lines for bought hardware (one node of one quote), held install + wait + run (see module doc), as
    affine functions of the price: computed once, evaluated at any price (the price templates need two). `spares`:
    s, the hot spares per node (`spare_fraction`), bought and held alike for the run as expected;
    `deposit_share_days`: d × L of the quote's deposit (`deposit_capital_per_dollar`)."""
    extra_frac = money.network_capex_fraction if nodes > 1 else 0.0
    hw = 1.0 + extra_frac                                  # the cluster's hardware per dollar of server price
    before_h = (install_days + wait_days) * 24.0
    held_ideal, held_wall = before_h + ideal_hours, before_h + wall_hours
    rework_h = wall_hours - ideal_hours
    after = owning.after_run
    share_i, share_w = charged_share(held_ideal, after, money), charged_share(held_wall, after, money)
    credit_i, credit_w = credited_share(held_ideal, after, money), credited_share(held_wall, after, money)
    capital_h = hw * money.cost_of_capital_pct_per_year / 100.0 / HOURS_PER_YEAR
    support_h = hw * money.support_pct_per_year / 100.0 / HOURS_PER_YEAR
    facility_h = node_kw * owning.facility_usd_per_kw_month / HOURS_PER_MONTH
    paid = 1.0 if owning.facility_is_cash else 0.0
    energy_h = node_kw * pue * usd_per_kwh
    terms: list[Term] = [
        ("compute", share_i, 0.0, 1.0, 0.0),
        ("network_storage", extra_frac * share_i, 0.0, extra_frac, 0.0),
    ]
    if after == "resell":
        terms.append(("resale_credit", -hw * credit_i, 0.0, 0.0, 0.0))
    terms += [
        ("failure_rework", hw * ((share_w - credit_w) - (share_i - credit_i)) + capital_h * rework_h
         + support_h * rework_h, facility_h * rework_h + energy_h * rework_h, support_h * rework_h,
         (facility_h * paid + energy_h) * rework_h),
        ("capital", capital_h * held_ideal, 0.0, 0.0, 0.0),
        ("support", support_h * held_ideal, 0.0, support_h * held_ideal, 0.0),
        ("facility", 0.0, facility_h * held_ideal, 0.0, facility_h * held_ideal * paid),
        ("energy", 0.0, energy_h * ideal_hours, 0.0, energy_h * ideal_hours),
    ]
    deposit = deposit_capital_per_dollar(nodes=nodes, spares=spares, deposit_share_days=deposit_share_days,
                                         money=money)
    if deposit > 0:
        terms.append(("deposit_capital", deposit, 0.0, 0.0, 0.0))
    loss_w = share_w - credit_w
    if spares > 0:
        terms.append(("spares", spares * (hw * loss_w + (capital_h + support_h) * held_wall),
                      spares * facility_h * held_wall, spares * (hw + support_h * held_wall),
                      spares * facility_h * held_wall * paid))
    if consumer:
        terms.append(("consumer_risk", (1.0 + spares) * loss_w * money.consumer_risk_pct / 100.0, 0.0, 0.0, 0.0))
    if estimate:
        driven = (1.0 + spares) * (hw * loss_w + (capital_h + support_h) * held_wall)
        terms.append(("estimate_price", driven * money.estimate_price_risk_pct / 100.0, 0.0, 0.0, 0.0))
    return terms


def lines_at(terms: list[Term], price: float, into: Lines | None = None) -> Lines:
    """The named lines of affine terms at a price (risk lines are never cash: `Lines.add`)."""
    lines = Lines() if into is None else into
    for name, cost_k, cost_0, cash_k, cash_0 in terms:
        lines.add(name, cost_0 + price * cost_k, cash=cash_0 + price * cash_k)
    return lines


def buy_node_lines(*, price: float, nodes: int, ideal_hours: float, wall_hours: float, install_days: float,
                   wait_days: float, node_kw: float, pue: float, usd_per_kwh: float, money: MoneyA, owning: Owning,
                   consumer: bool, estimate: bool, into: Lines | None = None, spares: float = 0.0,
                   deposit_share_days: float = 0.0) -> Lines:
    """Per-node lines for bought hardware at a price (`buy_node_terms` evaluated)."""
    terms = buy_node_terms(nodes=nodes, ideal_hours=ideal_hours, wall_hours=wall_hours, install_days=install_days,
                           wait_days=wait_days, node_kw=node_kw, pue=pue, usd_per_kwh=usd_per_kwh, money=money,
                           owning=owning, consumer=consumer, estimate=estimate, spares=spares,
                           deposit_share_days=deposit_share_days)
    return lines_at(terms, price, into)


def _node_data(lines: Lines, data: DataCost | None, wall_hours: float) -> None:
    """A rented node's share of the plan's storage (for the run's hours) and transfers (`checkpoints.DataCost`)."""
    if data is not None:
        lines.add("storage", data.storage_usd_per_hour * wall_hours)
        lines.add("data_transfer", data.transfer_usd)


def cloud_node_lines(*, usd_per_gpu_hour: float, per_node: int, ideal_hours: float, wall_hours: float,
                     commit_months: float, money: MoneyA, estimate: bool, into: Lines | None = None,
                     term_hours: float = math.inf, after_usd_per_gpu_hour: float = 0.0, spares: float = 0.0,
                     data: DataCost | None = None) -> Lines:
    """Per-node lines for rented capacity: GPU-hours × rate, billed for at least the committed term; the hours past
    the tier's term (`term_hours`: a reserved tier of a ladder) at the rate after it, never at the tier's. `spares`:
    s spare nodes per node billed alike for the run as expected; `data`: the node's share of storage and
    transfers at its provider's rates."""
    lines = Lines() if into is None else into
    floor = max(commit_months * HOURS_PER_MONTH, money.cloud_min_billed_hours)

    def billed(hours: float) -> tuple[float, float]:
        """(Dollars at the tier's price, dollars past its term) of one node for `hours` of run."""
        h = max(hours, floor)
        within = min(h, term_hours)
        return per_node * usd_per_gpu_hour * within, per_node * after_usd_per_gpu_hour * (h - within)

    ideal, wall = billed(ideal_hours), billed(wall_hours)
    lines.add("compute", sum(ideal))
    lines.add("failure_rework", sum(wall) - sum(ideal))
    if spares > 0:
        lines.add("spares", spares * sum(wall))
    _node_data(lines, data, wall_hours)
    if estimate:   # the estimate is the quote's own price: the hours past its term have their own rate
        lines.add("estimate_price", (1.0 + spares) * wall[0] * money.estimate_price_risk_pct / 100.0)
    return lines


def managed_node_lines(*, usd_per_month: float, ideal_hours: float, wall_hours: float, commit_months: float,
                       money: MoneyA, estimate: bool, into: Lines | None = None, spares: float = 0.0,
                       data: DataCost | None = None) -> Lines:
    """Per-system lines for a managed contract: months × price, at least the commitment (spares and the node's
    share of storage and transfers as `cloud_node_lines`)."""
    lines = Lines() if into is None else into
    m_ideal = max(ideal_hours / HOURS_PER_MONTH, commit_months)
    m_wall = max(wall_hours / HOURS_PER_MONTH, commit_months)
    lines.add("compute", usd_per_month * m_ideal)
    lines.add("failure_rework", usd_per_month * (m_wall - m_ideal))
    if spares > 0:
        lines.add("spares", spares * usd_per_month * m_wall)
    _node_data(lines, data, wall_hours)
    if estimate:
        lines.add("estimate_price", (1.0 + spares) * usd_per_month * m_wall * money.estimate_price_risk_pct / 100.0)
    return lines


def rented_per_dollar(*, mode: str, hours: np.ndarray, per_node: int, commit_months: float, money: MoneyA,
                      estimate: bool, term_hours: float = math.inf, after_usd_per_gpu_hour: float = 0.0,
                      spares: float = 0.0, data: DataCost | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(cost at price 0, cost per dollar of price, cash at price 0, cash per dollar) of one rented node
    (`cloud_node_lines`, `managed_node_lines`) for runs of `hours` in which every hour counts (ideal = wall: no
    failure rework apart), at many run lengths at once: the cloud bills per_node × max(hours, floor) GPU-hours, those
    within the tier's term at its price and the rest at the rate after it (the part at price 0), a managed contract
    max(months, commitment) months, each × (1 + s) with the spares; the node's storage (per hour) and transfers at
    price 0; an estimated price adds its premium to the cost of its own price's part."""
    if mode == "cloud":
        floor = max(commit_months * HOURS_PER_MONTH, money.cloud_min_billed_hours)
        billed = np.maximum(hours, floor)
        within = np.minimum(billed, term_hours)
        cash1 = per_node * within
        cash0 = per_node * after_usd_per_gpu_hour * (billed - within)
    else:
        cash1 = np.maximum(hours / HOURS_PER_MONTH, commit_months)
        cash0 = np.zeros_like(cash1)
    cash1, cash0 = cash1 * (1.0 + spares), cash0 * (1.0 + spares)
    if data is not None:
        cash0 = cash0 + data.storage_usd_per_hour * hours + data.transfer_usd
    premium = 1.0 + money.estimate_price_risk_pct / 100.0 if estimate else 1.0
    return cash0, cash1 * premium, cash0, cash1


def engineer_hour_usd(money: MoneyA) -> float:
    """What an hour of an engineer costs: the engineer-month ÷ its working hours."""
    return money.engineer_usd_per_month / money.engineer_hours_per_month


def fixed_lines(*, mode: str, gpus: int, nodes: int, wall_hours: float, porting_weeks: float, money: MoneyA,
                reliability: ReliabilityA | None = None, failures_per_hour: float = 0.0,
                data: DataCost | None = None) -> Lines:
    """Per-plan lines that do not scale with a quote's price: porting and operations engineering, orchestration,
    failure recovery, and (`data`: bought hardware, your own file system and transit) storage and transfers.

    Operations = (base, for clusters of more than one node, + per-1000-GPU) engineers × months of the run,
    at least `ops_min_days`: a run is set up and watched for a week however short it is, so splitting a
    small job over a hundred nodes does not look cheaper than running it on one. Orchestration = nodes ×
    $/node-month × months of the run. Recovery = λ × run hours interruptions × (engineer hours per failure +
    hardware share × your own hours to replace a node) × the engineer-hour (`engineer_hour_usd`); the expected
    interruptions scale with the run's length ([seed-001]: engineers' time recovering failed runs).
    """
    lines = Lines()
    month_cost = money.engineer_usd_per_month
    lines.add("porting", porting_weeks * month_cost * 12.0 / 52.0)
    fte = money.ops_fte[mode]  # type: ignore[index]
    engineers = (fte.base if nodes > 1 else 0.0) + fte.per_1000_gpus * gpus / 1000.0
    hours = max(wall_hours, money.ops_min_days * 24.0)
    lines.add("operations", engineers * month_cost * hours / HOURS_PER_MONTH)
    if data is not None:
        lines.add("storage", data.storage_usd_per_hour * wall_hours)
        lines.add("data_transfer", data.transfer_usd)
    lines.add("orchestration", nodes * money.orchestration_usd_per_node_month * wall_hours / HOURS_PER_MONTH)
    if reliability is not None:
        per_failure = money.engineer_hours_per_failure + reliability.hardware_failure_share * \
            reliability.node_replacement_hours[mode]  # type: ignore[index]
        lines.add("recovery", failures_per_hour * wall_hours * per_failure * engineer_hour_usd(money))
    return lines


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def lognormal(p50: float, p90: float | None) -> tuple[float, float] | None:
    """(μ, σ) of the lognormal through a median p50 and a 90th percentile p90; None when there is no spread (no
    p90, or p90 = p50: the lead time is taken as certain)."""
    if p90 is None or p90 <= p50 or p50 <= 0:
        return None
    return math.log(p50), math.log(p90 / p50) / Z90


def _excess(mu: float, sigma: float, b: float) -> float:
    """E[(L − b)⁺] for L = exp(μ + σZ): the Black–Scholes call value at zero rate (E[L] − b for b ≤ 0)."""
    mean = math.exp(mu + sigma * sigma / 2.0)
    if b <= 0:
        return mean - b
    d1 = (mu + sigma * sigma - math.log(b)) / sigma
    return max(0.0, mean * _phi(d1) - b * _phi(d1 - sigma))


def lead_cap(p50: float, p90: float | None, cap_quantile: float) -> float:
    """The latest a quote's capacity can arrive: its lead time's `cap_quantile` quantile (p50 without a spread)."""
    fit = lognormal(p50, p90)
    if fit is None:
        return p50
    mu, sigma = fit
    return math.exp(mu + sigma * _quantile_z(cap_quantile)) if cap_quantile < 1 else math.inf


@functools.lru_cache(maxsize=64)
def _quantile_z(q: float) -> float:
    """Φ⁻¹(q), kept per q: a problem has one cap quantile, asked for every quote of every re-priced what-if."""
    return NormalDist().inv_cdf(q)


def expected_excess_days(p50: float, p90: float | None, allowance: float, cap_quantile: float = 1.0) -> float:
    """E[max(0, min(L, c) − allowance)] for a lead time L lognormal through its p50 and p90, capped at c, its
    `cap_quantile` quantile (`assumptions.lead_time_cap_quantile`: a delivery later than that is cancelled and
    re-sourced, so it never slips further; 1 = no cap).

    With μ = ln p50 and σ = ln(p90/p50)/z₀.₉, E[(L − B)⁺] is the Black–Scholes call value at zero rate,
    e^(μ+σ²/2)·Φ(d₁) − B·Φ(d₂), d₁ = (μ + σ² − ln B)/σ, d₂ = d₁ − σ; capping gives E[(L − B)⁺] − E[(L − c)⁺] for
    B < c and 0 beyond. Without a p90 (or p90 = p50) the lead time is certain: max(0, p50 − B).
    """
    fit = lognormal(p50, p90)
    if fit is None:
        return max(0.0, p50 - allowance)
    mu, sigma = fit
    cap = lead_cap(p50, p90, cap_quantile)
    if allowance >= cap:
        return 0.0
    tail = _excess(mu, sigma, cap) if math.isfinite(cap) else 0.0
    return max(0.0, _excess(mu, sigma, allowance) - tail)


def slip_premium(p50: float, p90: float | None, allowance: float, money: MoneyA, cap_quantile: float = 1.0) -> float:
    """Delivery-slip premium of one quote: delay cost per day × the expected days by which its capacity arrives
    after the planned start, when `allowance` days separate the order from the planned start."""
    if money.delay_cost_usd_per_day <= 0:
        return 0.0
    return money.delay_cost_usd_per_day * expected_excess_days(p50, p90, allowance, cap_quantile)
