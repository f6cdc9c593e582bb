"""The catalog's per-system index of quote ids stays true through what-ifs (`Catalog.with_quotes` carries it over by
difference instead of walking a marketplace catalog again)."""

from __future__ import annotations

from pathlib import Path

from solver.inputs.catalog import Catalog
from solver.inputs.problem import load_problem

ROOT = Path(__file__).resolve().parent.parent


def _fresh(cat: Catalog) -> dict[str, tuple[str, ...]]:
    """The index computed here, independently: every quote id under its system, sorted."""
    out: dict[str, list[str]] = {}
    for qid, q in cat.quotes.items():
        out.setdefault(q.system, []).append(qid)
    return {sid: tuple(sorted(ids)) for sid, ids in out.items()}


def test_the_index_lists_every_quote_under_its_system() -> None:
    cat = load_problem(ROOT / "constraints" / "datacenter.yaml").catalog
    assert dict(cat.quote_ids_by_system) == _fresh(cat)


def test_a_what_if_moves_added_and_changed_quotes_in_the_index() -> None:
    cat = load_problem(ROOT / "constraints" / "datacenter.yaml").catalog
    by_system = _fresh(cat)
    lonely = min((sid for sid, ids in by_system.items() if len(ids) == 1))
    moved_id = by_system[lonely][0]
    target = next(sid for sid in sorted(by_system) if sid != lonely and
                  cat.quotes[by_system[sid][0]].mode == cat.quotes[moved_id].mode)
    changed = {moved_id: cat.quotes[moved_id].model_copy(update={"system": target}),
               "zz-new-quote": cat.quotes[moved_id].model_copy(update={"id": "zz-new-quote"})}
    after = cat.with_quotes(changed)
    assert "quote_ids_by_system" in cat.__dict__ and "quote_ids_by_system" in after.__dict__  # carried over
    assert dict(after.quote_ids_by_system) == _fresh(after)
    assert lonely in after.quote_ids_by_system       # the copy stays on the lonely system
    assert moved_id in after.quote_ids_by_system[target] and moved_id not in after.quote_ids_by_system[lonely]
