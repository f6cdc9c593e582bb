"""Cost model: what finishing the training costs, by procurement mode, as named line items in dollars.

Two views of the same plan:
- **cost** (the objective, "risk-adjusted completion cost"): bought hardware is charged as straight-line
  depreciation over the holding period (delivery → finish = install/burn-in + wall time) against the
  useful life, or in full with `policy.accounting: full_capex`; plus energy, cloud/managed bills,
  engineering, and explicit risk premiums.
- **cash** (what `budget.max_usd` limits by default): the money actually committed — full capex for bought
  hardware, bills, energy, engineering, rule surcharges; risk premiums are not cash.

Line items (all dollars):
  compute           buy: servers (depreciation or capex); cloud: GPU-hours × rate (billed at least
                    commit_months); managed: months × monthly price (at least commit_months)
  network_storage   buy only: (network + storage fraction) × server capex, network only for > 1 node
  energy            buy only: node kW × PUE × hours × $/kWh (cloud and managed prices include power)
  porting           engineer-weeks for the software stack × engineer cost
  operations        (base + per-1000-GPU) engineers × months of training × engineer cost
  failure_rework    the part of every time-proportional line caused by expected interruptions
  delivery_slip     (p90 − p50 lead time) × delay cost per day, for the slowest quote used
  consumer_risk     % of hardware for consumer cards (no ECC, datacenter use voids warranty; [seed-000])
  estimate_price    % of quote-derived cost resting on an estimated price
Sources (catalogs/bibliography.yaml): the assumptions each figure comes from carry theirs; the structure follows
[seed-001] ("cost per successful checkpoint" includes engineer time to recover failures) and the usual cloud
bill (rate × hours) and TCO energy term (IT kW × PUE × hours × tariff).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..inputs.assumptions import MoneyA

HOURS_PER_MONTH = 730.0
RISK_LINES = ("delivery_slip", "consumer_risk", "estimate_price")
LINE_ORDER = ("compute", "network_storage", "energy", "porting", "operations", "failure_rework",
              "delivery_slip", "consumer_risk", "estimate_price", "rules")


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


def buy_node_lines(*, price: float, nodes: int, ideal_hours: float, wall_hours: float, install_days: float,
                   node_kw: float, pue: float, usd_per_kwh: float, money: MoneyA, accounting: str,
                   consumer: bool, estimate: bool, into: Lines | None = None) -> Lines:
    """Per-node lines for bought hardware (one node of one quote)."""
    lines = Lines() if into is None else into
    extra_frac = money.storage_capex_fraction + (money.network_capex_fraction if nodes > 1 else 0.0)
    install_h = install_days * 24.0

    def charge(hours: float) -> float:
        return 1.0 if accounting == "full_capex" else depreciation_fraction(install_h + hours, money)

    base, full = charge(ideal_hours), charge(wall_hours)
    lines.add("compute", price * base, cash=price)
    lines.add("network_storage", price * extra_frac * base, cash=price * extra_frac)
    lines.add("failure_rework", price * (1 + extra_frac) * (full - base), cash=0.0)
    energy_per_hour = node_kw * pue * usd_per_kwh
    lines.add("energy", energy_per_hour * ideal_hours)
    lines.add("failure_rework", energy_per_hour * (wall_hours - ideal_hours))
    if consumer:
        lines.add("consumer_risk", price * full * money.consumer_risk_pct / 100.0)
    if estimate:
        lines.add("estimate_price", price * full * (1 + extra_frac) * money.estimate_price_risk_pct / 100.0)
    return lines


def cloud_node_lines(*, usd_per_gpu_hour: float, per_node: int, ideal_hours: float, wall_hours: float,
                     commit_months: float, money: MoneyA, estimate: bool, into: Lines | None = None) -> Lines:
    """Per-node lines for rented capacity: GPU-hours × rate, billed for at least the commitment."""
    lines = Lines() if into is None else into
    floor = max(commit_months * HOURS_PER_MONTH, money.cloud_min_billed_hours)
    billed_ideal = max(ideal_hours, floor)
    billed_wall = max(wall_hours, floor)
    rate = usd_per_gpu_hour * per_node
    lines.add("compute", rate * billed_ideal)
    lines.add("failure_rework", rate * (billed_wall - billed_ideal))
    if estimate:
        lines.add("estimate_price", rate * billed_wall * money.estimate_price_risk_pct / 100.0)
    return lines


def managed_node_lines(*, usd_per_month: float, ideal_hours: float, wall_hours: float, commit_months: float,
                       money: MoneyA, estimate: bool, into: Lines | None = None) -> Lines:
    """Per-system lines for a managed contract: months × price, at least the commitment."""
    lines = Lines() if into is None else into
    m_ideal = max(ideal_hours / HOURS_PER_MONTH, commit_months)
    m_wall = max(wall_hours / HOURS_PER_MONTH, commit_months)
    lines.add("compute", usd_per_month * m_ideal)
    lines.add("failure_rework", usd_per_month * (m_wall - m_ideal))
    if estimate:
        lines.add("estimate_price", usd_per_month * m_wall * money.estimate_price_risk_pct / 100.0)
    return lines


def fixed_lines(*, mode: str, gpus: int, nodes: int, wall_hours: float, porting_weeks: float,
                money: MoneyA) -> Lines:
    """Per-plan lines that do not scale with a quote's price: porting and operations engineering.

    Operations = (base, for clusters of more than one node, + per-1000-GPU) engineers × months of the run,
    at least `ops_min_days`: a run is set up and watched for a week however short it is, so splitting a
    small job over a hundred nodes does not look cheaper than running it on one.
    """
    lines = Lines()
    month_cost = money.engineer_usd_per_month
    lines.add("porting", porting_weeks * month_cost * 12.0 / 52.0)
    fte = money.ops_fte[mode]  # type: ignore[index]
    engineers = (fte.base if nodes > 1 else 0.0) + fte.per_1000_gpus * gpus / 1000.0
    hours = max(wall_hours, money.ops_min_days * 24.0)
    lines.add("operations", engineers * month_cost * hours / HOURS_PER_MONTH)
    return lines


def slip_premium(p50_days: float, p90_days: float | None, money: MoneyA) -> float:
    """Delivery-slip exposure of one quote: (p90 − p50) days × delay cost per day."""
    if p90_days is None:
        return 0.0
    return max(0.0, p90_days - p50_days) * money.delay_cost_usd_per_day
