"""The bibliography every catalog figure cites, shipped with the package (`catalogs/bibliography.yaml`).

A `source:` cites entries by id in square brackets ("[S1]", "[korthikanti2022]"); an installed `plan` must be able
to say what "[S1]" is without the notes the catalogs were compiled from, so the bibliography is package data and
`plan catalog sources` prints it. The test suite requires every bundled source to cite at least one id and every id
to resolve here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from pydantic import Field

from . import bundled
from .catalog import Catalog
from .schema import Strict, validate
from .units import Date

TAG = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9._-]*)\]")
"""A citation inside a source string: `[S1]`, `[seed-000]`, `[llama3-2024]`."""


class Entry(Strict):
    title: str = Field(min_length=1)
    url: str | None = None
    published: str | None = None
    accessed: Date
    weak: bool = False
    note: str | None = None


class _File(Strict):
    bibliography: dict[str, Entry]


def load_bibliography() -> Mapping[str, Entry]:
    src = bundled.load("bibliography.yaml")
    return MappingProxyType(validate(_File, src).bibliography)


def cited(source: str) -> list[str]:
    """The bibliography ids a source string cites, in order."""
    return TAG.findall(source)


def catalog_sources(cat: Catalog, assumption_leaves: Mapping[Any, Any]) -> Iterator[tuple[str, str]]:
    """(where, source text) of every sourced figure of a catalog and of the assumptions."""
    for kind, table in (("accelerators", cat.accelerators), ("systems", cat.systems)):
        for item_id, item in table.items():
            for name, value in item:
                source = getattr(value, "source", None)
                if isinstance(source, str):
                    yield f"{kind}:{item_id}.{name}", source
    for qid, q in cat.quotes.items():
        yield f"quotes:{qid}", q.source
    for path, leaf in assumption_leaves.items():
        yield "assumptions:" + ".".join(str(p) for p in path), leaf.source
