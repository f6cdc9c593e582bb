"""The total cost over the horizon of the chosen plan and its alternatives, as a table of the `--verbose` report
(`plan.tco`, answers/tco.py): one row per accelerator and mode, its columns adding up to the total."""

from __future__ import annotations

from tabulate import tabulate

from ..estimate.tco import RUN_OWN_LINES, TotalCost
from ..inputs.units import usd
from ..solve.plan import Plan, Result
from .safe import clean

HARDWARE = ("servers", "network")
OWNING = ("capital", "support", "facility", "energy", "staff")
YEARS_IN_WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine",
                  10: "Ten"}


def _years(h: float) -> str:
    """'Three-year' for 3, '2.5-year' for 2.5."""
    return f"{YEARS_IN_WORDS[int(h)]}-year" if float(h).is_integer() and int(h) in YEARS_IN_WORDS else f"{h:g}-year"


def _sum(t: TotalCost, names: tuple[str, ...]) -> float:
    return sum(t.line(n) for n in names)


def _row(p: Plan, t: TotalCost, chosen: bool) -> list[str]:
    """Mark, accelerator, mode, nodes, then the run's own lines, hardware, owning, resale, work after the run and the
    total; rented capacity has only its run."""
    head = ["CHOSEN" if chosen else "", p.accelerator, p.offer or p.mode, str(p.nodes)]
    if not t.owned:
        return head + [usd(t.total_usd), "-", "-", "-", "-", usd(t.total_usd)]
    rental = "" if t.rental is not None else " (no rental)"
    return head + [usd(_sum(t, RUN_OWN_LINES)), usd(_sum(t, HARDWARE)), usd(_sum(t, OWNING)), usd(t.line("resale")),
                   usd(t.line("work_after_run")) + rental, usd(t.total_usd)]


def _title(horizon: float, owned: list[TotalCost]) -> str:
    """What the table counts, with the terms of bought hardware when a row has it."""
    head = f"{_years(horizon)} cost (policy.horizon_years): rented capacity at its run's cost"
    if not owned:
        return head + ":"
    t = owned[0]
    return (f"{head}; bought hardware for {horizon:g} years from delivery, then sold, less the rental its work after "
            f"the run displaces (utilisation {(t.utilisation_after_run or 0.0):.0%}, policy.utilisation_after_run; "
            f"the cheapest on-demand or reserved rate, falling {(t.decline_pct_per_year or 0.0):g}% a year):")


def tco_table(r: Result, fmt: str = "simple", top: int | None = None) -> tuple[str, str]:
    """(Title, table): the chosen plan and its alternatives by total cost over the horizon (both empty without
    `plan.tco`)."""
    tco: dict[str, TotalCost] = r.extra.get("tco") or {}
    plans = ([(r.plan, True)] if r.plan else []) + [(a.plan, False) for a in r.alternatives]
    if top is not None:
        plans = plans[: max(1, top)]
    rows = [(p, tco[p.option], chosen) for p, chosen in plans if p.option in tco]
    if not rows:
        return "", ""
    horizon = rows[0][1].horizon_years
    table = tabulate([_row(p, t, chosen) for p, t, chosen in rows],
                     headers=["", "accelerator", "mode", "nodes", "the run", "hardware", "owning", "resale",
                              "work after run", f"{horizon:g}-year cost"],
                     tablefmt=fmt, colalign=("left", "left", "left", "right", "right", "right", "right", "right",
                                             "right", "right"))
    return clean(_title(horizon, [t for _p, t, _c in rows if t.owned])), clean(table)


__all__ = ["tco_table"]
