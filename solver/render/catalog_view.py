"""`plan catalog`: what the tool knows, with sources; estimates (`~`) and expired quotes flagged.

Tables fit a terminal (about 120 columns): sources are shown by their bibliography ids (`plan catalog sources`
resolves them), and `--format json` has every field. `plan catalog quotes --id X --format yaml` prints one quote
as a template to copy into a quotes file (an entry with a known id changes only the fields it gives).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

import yaml

from ..inputs.bibliography import Entry, cited
from ..inputs.catalog import Catalog, Quote, Sourced
from ..inputs.units import usd
from ..solve.plan import EXPIRING_DAYS
from .safe import clean

UNIT = {"buy": "/node", "cloud": "/GPU-h", "managed": "/node-mo"}


def _fig(s: Sourced) -> str:
    if s.value is None:
        return "-"
    v = s.value
    text = f"{v:g}" if isinstance(v, float) else str(v)
    return text + ("~" if s.estimate else "")


def _tags(source: str, limit: int = 2) -> str:
    ids = list(dict.fromkeys(cited(source)))
    return " ".join(f"[{i}]" for i in ids[:limit]) + (" …" if len(ids) > limit else "")


def catalog_rows(cat: Catalog, what: str, as_of: date, *, wide: bool = False) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows); `~` after a figure marks an estimate."""
    if what == "accelerators":
        quoted = {cat.systems[q.system].accelerator for q in cat.quotes.values() if not q.expired(as_of)}
        rows: list[list[Any]] = []
        for a in sorted(cat.accelerators.values(), key=lambda a: a.id):
            row = [a.id, a.vendor, a.cls, a.software, _fig(a.memory_gb), _fig(a.bf16_tflops), _fig(a.fp8_tflops),
                   _fig(a.ecc), str(a.available_from.value), "yes" if a.id in quoted else "NO QUOTE"]
            rows.append(row + ([_fig(a.tdp_w), _fig(a.memory_bw_tbs), a.memory_gb.source] if wide else
                               [_tags(a.memory_gb.source)]))
        head = ["id", "vendor", "class", "software", "mem GB", "bf16 TF", "fp8 TF", "ecc", "available", "quoted"]
        return head + (["W", "TB/s", "memory source"] if wide else ["sources"]), rows
    if what == "systems":
        sys_rows = [[s.id, s.accelerator, s.per_node, s.cooling, s.network, _fig(s.node_kw), _fig(s.nodes_per_rack),
                     _fig(s.scale_out_gbps_per_gpu), s.node_kw.source if wide else _tags(s.node_kw.source)]
                    for s in sorted(cat.systems.values(), key=lambda s: s.id)]
        return (["id", "accelerator", "per node", "cooling", "network", "node kW", "nodes/rack", "Gb/s/GPU",
                 "node kW source" if wide else "sources"], sys_rows)
    quote_rows: list[list[Any]] = []
    for q in sorted(cat.quotes.values(), key=lambda q: q.id):
        left = (q.valid_until - as_of).days
        state = f"EXPIRED {q.valid_until}" if q.expired(as_of) else (
            f"quoted {q.quoted_on}" if q.not_yet_quoted(as_of) else
            f"{q.valid_until} ({left}d!)" if left <= EXPIRING_DAYS else str(q.valid_until))
        price = "unpriced" if not q.priced else (f"${q.price:,.2f}" if q.mode == "cloud" else usd(q.price)) + \
            UNIT[q.mode] + ("~" if q.kind == "estimate" else "")
        row = [q.id, q.system, q.mode if wide else _terms(q), price, str(q.max_nodes),
               f"{q.lead_time_days:g}" + (f"/{q.lead_time_p90_days:g}" if q.lead_time_p90_days else ""), state]
        quote_rows.append(row + ([q.term or "purchase", f"{q.commit_months:g}", q.kind, q.vendor,
                                  q.fabric or ("site" if q.mode == "buy" else "-"), q.source]
                                 if wide else [_tags(q.source, limit=1)]))
    head = ["id", "system", "mode", "price", "max", "lead d", "valid to"]
    return head + (["contract", "commit months", "kind", "vendor", "fabric", "source"] if wide else ["sources"]), \
        quote_rows



def catalog_records(cat: Catalog, what: str, as_of: date) -> list[dict[str, Any]]:
    """`--format json`: one record per item with typed values (numbers as numbers, dates as ISO strings, snake_case
    keys: the catalog's own fields, as a catalog file writes them), plus what the table derives — for a quote its
    `status` on `as_of` (valid, expiring, expired, not_yet_quoted), `price_unit` and `priced`; for an accelerator
    whether any valid quote offers it."""
    if what == "accelerators":
        quoted = {cat.systems[q.system].accelerator for q in cat.quotes.values() if not q.expired(as_of)}
        return [{**_dump(a), "quoted": a.id in quoted} for a in sorted(cat.accelerators.values(), key=lambda a: a.id)]
    if what == "systems":
        return [_dump(s) for s in sorted(cat.systems.values(), key=lambda s: s.id)]
    out = []
    for q in sorted(cat.quotes.values(), key=lambda q: q.id):
        left = (q.valid_until - as_of).days
        status = "expired" if q.expired(as_of) else "not_yet_quoted" if q.not_yet_quoted(as_of) else \
            "expiring" if left <= EXPIRING_DAYS else "valid"
        out.append({**_dump(q), "status": status, "priced": q.priced,
                    "price_unit": PRICE_UNIT[q.mode], "fabric_id": q.fabric_id})
    return out


PRICE_UNIT = {"buy": "usd_per_node", "cloud": "usd_per_gpu_hour", "managed": "usd_per_node_month"}


def _dump(model: Any) -> dict[str, Any]:
    """A catalog model's fields as JSON data, absent values left out (as a catalog file omits them)."""
    return {k: v for k, v in model.model_dump(mode="json", by_alias=True).items() if v is not None}


def bibliography_records(entries: Mapping[str, Entry], cat_ids: set[str] | None = None) -> list[dict[str, Any]]:
    """`plan catalog sources --format json`: every entry's fields, typed, with its id."""
    return [{"id": k, **_dump(e)} for k, e in sorted(entries.items(), key=lambda kv: _natural(kv[0]))
            if cat_ids is None or k in cat_ids]


def _terms(q: Quote) -> str:
    """The mode with its contract: buy, cloud (on demand), cloud 12mo (reserved), cloud spot, managed 6mo."""
    if q.term == "reserved":
        return f"{q.mode} {q.commit_months:g}mo"
    if q.term == "spot":
        return f"{q.mode} spot"
    return q.mode


def quote_template(q: Quote) -> str:
    """One quote as YAML to copy into a `--quotes` file (only the fields that change need to stay)."""
    data = {k: v for k, v in q.model_dump(by_alias=True).items() if v is not None}
    body = yaml.safe_dump({"quotes": [data]}, sort_keys=False, allow_unicode=True, width=110)
    return clean("# A quote with a known id changes only the fields it gives; delete the others.\n" + body)


def bibliography_rows(entries: Mapping[str, Entry],
                      cat_ids: set[str] | None = None) -> tuple[list[str], list[list[Any]]]:
    rows = [[k, e.title + (" (weak)" if e.weak else ""), e.url or "-", e.published or "-", str(e.accessed)]
            for k, e in sorted(entries.items(), key=lambda kv: _natural(kv[0]))
            if cat_ids is None or k in cat_ids]
    return ["id", "title", "url", "published", "accessed"], rows


def _natural(key: str) -> tuple[Any, ...]:
    """S2 before S10: ids compared by their numeric parts."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", key))
