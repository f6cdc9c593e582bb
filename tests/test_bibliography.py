"""Every figure in the bundled catalogs cites the project's own bibliography, which ships with the package.

A user of an installed `plan` has no copy of the notes the catalogs were compiled from: each `source:` must cite at
least one `[id]` that resolves to an entry of catalogs/bibliography.yaml (title, date read, URL where there is
one), and nothing may point outside the package.
"""

from __future__ import annotations

import re
from pathlib import Path

from solver.inputs.assumptions import bundled_leaves
from solver.inputs.bibliography import TAG, catalog_sources, cited, load_bibliography
from solver.inputs.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(r"\.\./shared|shared/reference|formulas\.md|calibration\.md|hardware-facts|seed 0\d\d|issue #")


def _sources() -> list[tuple[str, str]]:
    return list(catalog_sources(load_catalog(), bundled_leaves()[1]))


def test_every_source_cites_the_bibliography() -> None:
    bib = load_bibliography()
    sources = _sources()
    assert len(sources) > 300
    uncited = [where for where, text in sources if not cited(text)]
    assert uncited == [], uncited[:10]
    unknown = sorted({(where, tag) for where, text in sources for tag in cited(text) if tag not in bib})
    assert unknown == [], unknown[:10]


def test_every_bibliography_entry_is_complete_and_used() -> None:
    bib = load_bibliography()
    used = {tag for _where, text in _sources() for tag in cited(text)}
    text = "\n".join(p.read_text() for p in (ROOT / "catalogs").rglob("*.yaml") if p.name != "bibliography.yaml")
    used |= set(TAG.findall(text))  # notes and comments may cite too
    assert set(bib) <= used, sorted(set(bib) - used)
    for key, entry in bib.items():
        assert entry.title.strip(), key
        assert entry.url is None or entry.url.startswith("https://") or entry.url.startswith("http://"), key


def test_nothing_points_outside_the_package() -> None:
    for path in sorted((ROOT / "catalogs").rglob("*")):
        if path.suffix in (".yaml", ".md"):
            hits = [line for line in path.read_text().splitlines() if OUTSIDE.search(line)]
            assert hits == [], (path.name, hits[:3])
