"""Total cost of ownership over a horizon (`plan.tco`): what a route to the trained model costs over
`policy.horizon_years` (default 3), the comparison [seed-000] makes before the data decides ("every route — own
servers, cloud, a managed system — converted to the three-year total cost of completing the training").

**Rented capacity** (cloud, managed): the run's cost, nothing after it — its cost lines as they are (`cost_usd`).

**Bought hardware** is held from its first delivery T₀ to T_end = max(T₀ + H, the end of the run), H the horizon,
then sold. Each lot — the n nodes of one quote at price p, delivered at T_q — is charged for the h_q = T_end − T_q
hours it is held, at the rates of the cost lines (`cost.py`: the holding-cost view of owning of [bud-tco]), s the hot
spares per node (`cost.spare_fraction`) and f the network share of a cluster of more than one node:

  servers         Σ p·n·(1 + s)                                       (the hot spares bought with the nodes)
  network         f × servers
  capital         Σ p·n·(1 + s)(1 + f) × cost of capital %/yr × h_q / 8760
  support         Σ p·n·(1 + s)(1 + f) × support %/yr × h_q / 8760
  facility        Σ n·(1 + s) × node kW × $/kW-month × h_q / 730
  energy          N × node kW × PUE × $/kWh × (run hours + u × hours after the run)     (spares unpowered, as cost.py)
  staff           (base + per-1000-GPU) engineers of bought hardware × $/engineer-month × (T_end − T₀) / 730
  <the run's own> the plan's lines that owning over the horizon does not replace (`RUN_OWN_LINES`: the deposits'
                  cost of capital before delivery, porting, storage, transfers, orchestration, recovery, lateness
                  and the other premiums), as charged
  resale          −Σ p·n·(1 + s)(1 + f) × resale fraction at the age h_q / 8760 (`cost.resale_fraction`)
  work_after_run  −u × G × 8760 × r₀ × ∫ₐᵇ (1 − d)ᵗ dt: the rental that the work done after the run displaces —
                  u the utilisation after the run, G the plan's GPUs, r₀ the cheapest comparable $/GPU-hour of the
                  accelerator in the catalog (on demand or reserved, not spot), d its yearly decline
                  (`tco.rental_decline_pct_per_year`), a and b the end of the run and T_end in years from the
                  planning date; ∫ₐᵇ (1 − d)ᵗ dt = ((1 − d)ᵇ − (1 − d)ᵃ) / ln(1 − d), or b − a when d = 0.

The lines the horizon replaces are the run's holding and hardware lines (compute, network_storage, spares,
resale_credit, capital, support, facility, energy), its operations engineering (staff) and the parts of them that
failures and the run's spread add (failure_rework, throughput): the horizon charges every hour of the hall, the
capital and the support whatever the run's length. Sources: every rate is a sourced assumption of
catalogs/assumptions.yaml (money, tco); `policy.after_run` does not enter — the horizon is the same for every plan.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

from ..inputs.assumptions import MoneyA
from ..inputs.catalog import Quote, System
from ..inputs.units import HOURS_PER_MONTH
from .cost import HOURS_PER_YEAR, resale_fraction

RUN_OWN_LINES = ("deposit_capital", "porting", "storage", "data_transfer", "orchestration", "recovery", "lateness",
                 "consumer_risk", "estimate_price", "tail", "rules")
"""The run's lines a bought plan keeps in its total cost: what the run itself needs, whoever owns the hardware."""
OWNED_ORDER = ("servers", "network", "capital", "support", "facility", "energy", "staff", *RUN_OWN_LINES,
               "resale", "work_after_run")


@dataclass(frozen=True)
class OwnedLot:
    """The bought nodes of one quote: how many, at what price per node, delivered how many hours after the
    planning date."""

    nodes: int
    price_usd: float
    delivered_hour: float


@dataclass(frozen=True)
class OwnedRun:
    """A bought plan as its total cost reads it: its lots, its size, and when its run starts and how long it takes
    (hours from the planning date; wall hours, failures included)."""

    lots: tuple[OwnedLot, ...]
    nodes: int
    gpus: int
    node_kw: float
    spare_fraction: float
    network_fraction: float
    engineers: float
    run_start_hour: float
    run_hours: float

    @property
    def first_delivery_hour(self) -> float:
        return min(lot.delivered_hour for lot in self.lots)

    @property
    def run_end_hour(self) -> float:
        return self.run_start_hour + self.run_hours


@dataclass(frozen=True)
class SiteRates:
    """What running your own hardware costs per kW: the hall's rent (your own or a colocation cage) and energy."""

    pue: float
    usd_per_kwh: float
    facility_usd_per_kw_month: float


@dataclass(frozen=True)
class Rental:
    """The rental that work on owned hardware displaces: the cheapest comparable quote of the accelerator."""

    quote: str
    usd_per_gpu_hour: float


@dataclass(frozen=True)
class Horizon:
    """The years a total cost covers, the share of the hours after the run the hardware works (u), and what that
    work is worth: the displaced rental (None: the catalog rents no such accelerator) and its decline, % a year."""

    years: float
    utilisation: float
    decline_pct_per_year: float
    rental: Rental | None


@dataclass(frozen=True)
class TotalCost:
    """A plan's total cost over the horizon, as named lines in dollars (module docstring); for bought hardware also
    the horizon's terms (utilisation after the run, the displaced rental and its decline, the hours held)."""

    horizon_years: float
    lines: tuple[tuple[str, float], ...]
    owned: bool
    utilisation_after_run: float | None = None
    rental: Rental | None = None
    decline_pct_per_year: float | None = None
    held_hours: float | None = None

    @property
    def total_usd(self) -> float:
        return sum(v for _n, v in self.lines)

    @property
    def held_years(self) -> float | None:
        """Bought hardware: the years from its first delivery to its sale (the horizon, or the run if longer)."""
        return None if self.held_hours is None else self.held_hours / HOURS_PER_YEAR

    def line(self, name: str) -> float:
        """One line's dollars (0 when the plan has no such line)."""
        return sum(v for n, v in self.lines if n == name)


def rented_tco(horizon_years: float, run_lines: Mapping[str, float]) -> TotalCost:
    """Rented capacity: the run's cost lines, nothing after the run."""
    return TotalCost(horizon_years, tuple(run_lines.items()), owned=False)


def horizon_end_hour(run: OwnedRun, years: float) -> float:
    """T_end = max(T₀ + H, the end of the run): the horizon from the first delivery, longer if the run is."""
    return max(run.first_delivery_hour + years * HOURS_PER_YEAR, run.run_end_hour)


def decline_integral(decline: float, a_years: float, b_years: float) -> float:
    """∫ₐᵇ (1 − d)ᵗ dt, in years: ((1 − d)ᵇ − (1 − d)ᵃ) / ln(1 − d); b − a without a decline (d = 0)."""
    if b_years <= a_years:
        return 0.0
    if decline <= 0:
        return b_years - a_years
    k = math.log(1.0 - decline)
    return (math.exp(k * b_years) - math.exp(k * a_years)) / k


def displaced_rental_usd(run: OwnedRun, horizon: Horizon, end_hour: float) -> float:
    """u × G × 8760 × r₀ × ∫ₐᵇ (1 − d)ᵗ dt: the rental the hardware's work after the run, to T_end, saves."""
    if horizon.rental is None or horizon.utilisation <= 0:
        return 0.0
    years = decline_integral(horizon.decline_pct_per_year / 100.0, run.run_end_hour / HOURS_PER_YEAR,
                             end_hour / HOURS_PER_YEAR)
    return horizon.utilisation * run.gpus * HOURS_PER_YEAR * horizon.rental.usd_per_gpu_hour * years


def lot_lines(lot: OwnedLot, run: OwnedRun, end_hour: float, money: MoneyA, site: SiteRates) -> dict[str, float]:
    """One lot's hardware and holding lines for the h = T_end − T_q hours it is held (module docstring)."""
    held = end_hour - lot.delivered_hour
    servers = lot.price_usd * lot.nodes * (1.0 + run.spare_fraction)
    hardware = servers * (1.0 + run.network_fraction)
    years = held / HOURS_PER_YEAR
    return {"servers": servers, "network": servers * run.network_fraction,
            "capital": hardware * money.cost_of_capital_pct_per_year / 100.0 * years,
            "support": hardware * money.support_pct_per_year / 100.0 * years,
            "facility": lot.nodes * (1.0 + run.spare_fraction) * run.node_kw * site.facility_usd_per_kw_month
            * held / HOURS_PER_MONTH,
            "resale": -hardware * resale_fraction(years, money)}


def owned_tco(run: OwnedRun, horizon: Horizon, money: MoneyA, site: SiteRates,
              run_lines: Mapping[str, float]) -> TotalCost:
    """Bought hardware over the horizon: its lots' lines, energy, staff, the run's own lines, less the resale and
    the rental its work after the run displaces (module docstring)."""
    end = horizon_end_hour(run, horizon.years)
    lines: dict[str, float] = {}
    for lot in run.lots:
        for name, usd in lot_lines(lot, run, end, money, site).items():
            lines[name] = lines.get(name, 0.0) + usd
    after = max(0.0, end - run.run_end_hour)
    lines["energy"] = run.nodes * run.node_kw * site.pue * site.usd_per_kwh * \
        (run.run_hours + horizon.utilisation * after)
    lines["staff"] = run.engineers * money.engineer_usd_per_month * (end - run.first_delivery_hour) / HOURS_PER_MONTH
    for name in RUN_OWN_LINES:
        if name in run_lines:
            lines[name] = run_lines[name]
    lines["work_after_run"] = 0.0 - displaced_rental_usd(run, horizon, end)   # 0.0, never -0.0, without any
    ordered = tuple((name, lines[name]) for name in OWNED_ORDER if name in lines)
    return TotalCost(horizon.years, ordered, owned=True, utilisation_after_run=horizon.utilisation,
                     rental=horizon.rental, decline_pct_per_year=horizon.decline_pct_per_year,
                     held_hours=end - run.first_delivery_hour)


def cheapest_rental(quotes: Iterable[Quote], systems: Mapping[str, System], accelerator: str,
                    as_of: date) -> Rental | None:
    """The cheapest $/GPU-hour at which the catalog rents `accelerator` on demand or reserved (spot capacity can be
    reclaimed: it does not stand in for owned hardware), among priced cloud quotes valid at the planning date and
    dated on or before it; ties by quote id. None when there is none."""
    best: tuple[float, str] | None = None
    for q in quotes:
        if q.mode != "cloud" or not q.priced or q.preemptible or q.expired(as_of) or q.not_yet_quoted(as_of):
            continue
        system = systems.get(q.system)
        if system is None or system.accelerator != accelerator:
            continue
        if best is None or (q.price, q.id) < best:
            best = (q.price, q.id)
    return None if best is None else Rental(best[1], best[0])


__all__ = ["OwnedLot", "OwnedRun", "SiteRates", "Rental", "Horizon", "TotalCost", "rented_tco", "owned_tco",
           "horizon_end_hour", "decline_integral", "displaced_rental_usd", "lot_lines", "cheapest_rental",
           "RUN_OWN_LINES", "OWNED_ORDER"]
