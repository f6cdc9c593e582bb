"""Every plan's total cost over the horizon (`plan.tco`): the chosen plan's and each alternative's, read from the
problem and the plan (`estimate/tco.py` holds the formulas)."""

from __future__ import annotations

from ..estimate.cost import spare_fraction
from ..estimate.options import owning, spare_nodes_pct
from ..estimate.tco import Horizon, OwnedLot, OwnedRun, Rental, SiteRates, TotalCost, cheapest_rental, owned_tco, \
    rented_tco
from ..inputs.problem import Problem
from ..solve.plan import Plan, Result


def utilisation_after_run(problem: Problem) -> float:
    """u: `policy.utilisation_after_run`, else the assumption `tco.utilisation_after_run`."""
    u = problem.spec.policy.utilisation_after_run
    return float(u if u is not None else problem.assumptions.values.tco.utilisation_after_run)


def displaced_rental(problem: Problem, accelerator: str) -> Rental | None:
    """The cheapest comparable rental of the accelerator in the problem's catalog (`tco.cheapest_rental`), read
    through the quotes of its systems only."""
    cat = problem.catalog
    ids = [qid for sid, system in sorted(cat.systems.items()) if system.accelerator == accelerator
           for qid in cat.quote_ids_by_system.get(sid, ())]
    return cheapest_rental((cat.quotes[qid] for qid in ids), cat.systems, accelerator, problem.as_of)


def owned_run(problem: Problem, plan: Plan) -> OwnedRun:
    """A bought plan's lots (one per quote, from its planned delivery), size, spares, network share, the engineers
    that look after it, and its run's start and wall hours."""
    a = problem.assumptions.values
    as_of = problem.as_of
    lots = tuple(OwnedLot(q.nodes, q.price, ((q.delivered or plan.start) - as_of).days * 24.0)
                 for q in plan.quotes)
    fte = a.money.ops_fte["buy"]
    engineers = (fte.base if plan.nodes > 1 else 0.0) + fte.per_1000_gpus * plan.gpus / 1000.0
    return OwnedRun(lots=lots, nodes=plan.nodes, gpus=plan.gpus,
                    node_kw=float(problem.catalog.systems[plan.system].node_kw.value),
                    spare_fraction=spare_fraction(plan.nodes, spare_nodes_pct(problem)),
                    network_fraction=a.money.network_capex_fraction if plan.nodes > 1 else 0.0,
                    engineers=engineers, run_start_hour=(plan.start - as_of).days * 24.0,
                    run_hours=plan.gpu_hours / plan.gpus if plan.gpus else 0.0)


def plan_tco(problem: Problem, plan: Plan) -> TotalCost:
    """A plan's total cost over `policy.horizon_years`: bought hardware over the whole horizon, rented capacity at
    its run's cost."""
    years = float(problem.spec.policy.horizon_years)
    if plan.mode != "buy" or problem.spec.site is None:
        return rented_tco(years, plan.lines.cost)
    a = problem.assumptions.values
    site = problem.spec.site
    rates = SiteRates(float(site.pue), float(site.electricity_usd_per_kwh), owning(problem).facility_usd_per_kw_month)
    horizon = Horizon(years, utilisation_after_run(problem), a.tco.rental_decline_pct_per_year,
                      displaced_rental(problem, plan.accelerator))
    return owned_tco(owned_run(problem, plan), horizon, a.money, rates, plan.lines.cost)


def tco_by_option(problem: Problem, result: Result) -> dict[str, TotalCost]:
    """The total cost of the chosen plan and of every alternative, by option id (as the risk figures)."""
    plans = ([result.plan] if result.plan is not None else []) + [alt.plan for alt in result.alternatives]
    return {p.option: plan_tco(problem, p) for p in plans}


__all__ = ["plan_tco", "tco_by_option", "owned_run", "displaced_rental", "utilisation_after_run"]
