"""Rows for `plan catalog`: what the tool knows, each figure's source, estimates and expired quotes flagged."""

from __future__ import annotations

from datetime import date
from typing import Any

from .catalog import Catalog, Sourced


def _fig(s: Sourced) -> str:
    if s.value is None:
        return "-"
    v = s.value
    text = f"{v:g}" if isinstance(v, float) else str(v)
    return text + ("~" if s.estimate else "")


def catalog_rows(cat: Catalog, what: str, as_of: date) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows); `~` after a figure marks an estimate."""
    if what == "accelerators":
        quoted = {cat.systems[q.system].accelerator for q in cat.quotes.values() if not q.expired(as_of)}
        rows: list[list[Any]] = []
        for a in sorted(cat.accelerators.values(), key=lambda a: a.id):
            rows.append([a.id, a.vendor, a.cls, a.software, _fig(a.memory_gb), _fig(a.memory_bw_tbs),
                         _fig(a.bf16_tflops), _fig(a.fp8_tflops), _fig(a.tdp_w), _fig(a.ecc),
                         str(a.available_from.value), "yes" if a.id in quoted else "NO QUOTE",
                         f"{a.memory_gb.source} ({a.memory_gb.as_of})"])
        return (["id", "vendor", "class", "software", "mem GB", "TB/s", "bf16 TF", "fp8 TF", "W", "ecc", "available",
                 "quoted", "memory source"], rows)
    if what == "systems":
        sys_rows = [[s.id, s.accelerator, s.per_node, s.cooling, s.network, _fig(s.node_kw), _fig(s.nodes_per_rack),
                 _fig(s.scale_out_gbps_per_gpu), f"{s.node_kw.source} ({s.node_kw.as_of})"]
                for s in sorted(cat.systems.values(), key=lambda s: s.id)]
        return (["id", "accelerator", "per node", "cooling", "network", "node kW", "nodes/rack", "Gb/s/GPU",
                 "node kW source"], sys_rows)
    quote_rows: list[list[Any]] = []
    for q in sorted(cat.quotes.values(), key=lambda q: q.id):
        unit = {"buy": "/node", "cloud": "/GPU-h", "managed": "/node-month"}[q.mode]
        state = f"EXPIRED {q.valid_until}" if q.expired(as_of) else f"valid to {q.valid_until}"
        quote_rows.append([q.id, q.system, q.mode, q.vendor, f"${q.price:,.2f}{unit}", q.kind, q.max_nodes,
                     f"{q.lead_time_days:g}" + (f"/{q.lead_time_p90_days:g}" if q.lead_time_p90_days else ""),
                     state, f"{q.source} ({q.quoted_on})"])
    return (["id", "system", "mode", "vendor", "price", "kind", "max nodes", "lead p50/p90 d", "validity", "source"],
            quote_rows)
