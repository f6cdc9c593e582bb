"""The hardware catalog: accelerators, systems and quotes, each figure with its source and date.

Bundled files live in `catalogs/` (found relative to this package, so `plan` works from any directory);
users layer their own files or folders on top, and an entry with the same `id` replaces the bundled one.
"""

from __future__ import annotations

import difflib
import os
from datetime import date
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from .errors import InputError
from .units import Count, Date, MoneyOrZero, NonNegFloat, PositiveFloat
from .validate import Strict, validate
from .yamlsrc import Source, load_file

CATALOG_DIR = Path(__file__).resolve().parent.parent / "catalogs"

Vendor = Literal["nvidia", "amd", "google", "intel", "cerebras"]
AccelClass = Literal["consumer", "workstation", "datacenter", "tpu", "wafer"]
Software = Literal["cuda", "rocm", "xla", "cerebras", "synapse"]
Cooling = Literal["air", "liquid"]
Mode = Literal["buy", "cloud", "managed"]
MODES: tuple[Mode, ...] = ("buy", "cloud", "managed")


class Sourced(Strict):
    """A figure with its provenance. `estimate: true` marks derived or guessed figures."""

    value: Any
    source: str = Field(min_length=3)
    as_of: Date
    estimate: bool = False


class SourcedNumber(Sourced):
    value: float

    @field_validator("value")
    @classmethod
    def _positive(cls, v: float) -> float:
        if not v > 0:
            raise ValueError(f"expected a positive number, got {v}")
        return v


class SourcedOptionalNumber(Sourced):
    value: float | None

    @field_validator("value")
    @classmethod
    def _positive(cls, v: float | None) -> float | None:
        if v is not None and not v > 0:
            raise ValueError(f"expected a positive number or null, got {v}")
        return v


class SourcedBool(Sourced):
    value: bool


class SourcedDate(Sourced):
    value: Date


class Accelerator(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    name: str
    vendor: Vendor
    class_: AccelClass = Field(alias="class")
    software: Software
    scale_up: str
    memory_gb: SourcedNumber
    memory_bw_tbs: SourcedNumber
    bf16_tflops: SourcedNumber
    fp8_tflops: SourcedOptionalNumber
    tdp_w: SourcedNumber
    ecc: SourcedBool
    available_from: SourcedDate
    notes: str | None = None

    @property
    def cls(self) -> AccelClass:
        return self.class_

    def peak_tflops(self, precision: str) -> float:
        """Dense peak for the training precision; FP8 falls back to BF16 where the chip has no FP8."""
        if precision == "fp8" and self.fp8_tflops.value:
            return float(self.fp8_tflops.value)
        return float(self.bf16_tflops.value)


class System(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    name: str
    accelerator: str
    per_node: int = Field(ge=1, le=100_000)
    cooling: Cooling
    network: str
    node_kw: SourcedNumber
    nodes_per_rack: SourcedNumber
    scale_out_gbps_per_gpu: SourcedNumber
    notes: str | None = None


class Quote(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    system: str
    mode: Mode
    vendor: str
    price_usd: MoneyOrZero | None = Field(default=None, le=1e10)
    usd_per_gpu_hour: PositiveFloat | None = Field(default=None, le=1e4)
    usd_per_month: MoneyOrZero | None = Field(default=None, le=1e10)
    min_nodes: int = Field(default=1, ge=0, le=1_000_000)
    max_nodes: int = Field(ge=1, le=1_000_000)
    lead_time_days: NonNegFloat = Field(le=3650)
    lead_time_p90_days: NonNegFloat | None = Field(default=None, le=3650)
    commit_months: NonNegFloat = Field(default=0, le=120)
    quoted_on: Date
    valid_until: Date
    kind: Literal["list", "street", "negotiated", "estimate"]
    source: str = Field(min_length=3)
    notes: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "Quote":
        price_field = {"buy": "price_usd", "cloud": "usd_per_gpu_hour", "managed": "usd_per_month"}[self.mode]
        for name in ("price_usd", "usd_per_gpu_hour", "usd_per_month"):
            given = getattr(self, name) is not None
            if name == price_field and not given:
                raise ValueError(f"a {self.mode} quote needs {price_field}")
            if name != price_field and given:
                raise ValueError(f"{name} does not apply to a {self.mode} quote (use {price_field})")
        if self.max_nodes < self.min_nodes:
            raise ValueError(f"max_nodes ({self.max_nodes}) is below min_nodes ({self.min_nodes})")
        if self.lead_time_p90_days is not None and self.lead_time_p90_days < self.lead_time_days:
            raise ValueError("lead_time_p90_days is below lead_time_days (the p50)")
        if self.valid_until < self.quoted_on:
            raise ValueError(f"valid_until {self.valid_until} is before quoted_on {self.quoted_on}")
        return self

    @property
    def price(self) -> float:
        """The quote's price in its own unit (per node, per GPU-hour or per node-month)."""
        return float(self.price_usd if self.mode == "buy" else
                     self.usd_per_gpu_hour if self.mode == "cloud" else self.usd_per_month)  # type: ignore[arg-type]

    def lead_days(self, confidence: str) -> float:
        if confidence == "p90" and self.lead_time_p90_days is not None:
            return self.lead_time_p90_days
        return self.lead_time_days

    def expired(self, as_of: date) -> bool:
        return self.valid_until < as_of


class _AcceleratorFile(Strict):
    accelerators: list[Accelerator]


class _SystemFile(Strict):
    systems: list[System]


class _QuoteFile(Strict):
    quotes: list[Quote]


class Catalog:
    """Accelerators, systems and quotes by id, with the file and line each came from."""

    def __init__(self) -> None:
        self.accelerators: dict[str, Accelerator] = {}
        self.systems: dict[str, System] = {}
        self.quotes: dict[str, Quote] = {}
        self.origin: dict[str, str] = {}

    def system_of(self, quote: Quote) -> System:
        return self.systems[quote.system]

    def accelerator_of(self, system: System) -> Accelerator:
        return self.accelerators[system.accelerator]


def _shown(file: str) -> str:
    """A catalog path as the user would type it: relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


def _files_in(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    return [path]


def _add(catalog: Catalog, src: Source, kind: str, items: list[Any], layer: str) -> None:
    table: dict[str, Any] = getattr(catalog, kind)
    seen: set[str] = set()
    for i, item in enumerate(items):
        if item.id in seen:
            raise src.error((kind, i, "id"), f"duplicate {kind[:-1]} id '{item.id}' in the same file")
        seen.add(item.id)
        where = f"{_shown(src.file)}:{src.line_of((kind, i)) or '?'}"
        if item.id in table and layer == "bundled":
            raise src.error((kind, i, "id"), f"{kind[:-1]} id '{item.id}' is already defined at "
                            f"{catalog.origin[kind + ':' + item.id]}")
        table[item.id] = item
        catalog.origin[kind + ":" + item.id] = where


def _load_one(catalog: Catalog, file: Path, layer: str) -> None:
    src = load_file(file)
    if not isinstance(src.data, dict):
        raise src.error((), "expected a mapping with one of the keys accelerators, systems, quotes")
    keys = [k for k in ("accelerators", "systems", "quotes") if k in src.data]
    if file.name in ("assumptions.yaml",) or "assumptions" in src.data:
        return
    if not keys:
        key = sorted(src.data)[0] if src.data else ""
        hint = difflib.get_close_matches(key, ["accelerators", "systems", "quotes"], n=1)
        raise src.error((key,) if key else (), "expected a key 'accelerators', 'systems' or 'quotes' (a list of "
                        "entries)" + (f"; did you mean '{hint[0]}' for '{key}'?" if hint else ""))
    for key in keys:
        if not isinstance(src.data[key], list):
            raise src.error((key,), "expected a list of entries")
    model = {"accelerators": _AcceleratorFile, "systems": _SystemFile, "quotes": _QuoteFile}
    for key in keys:
        parsed: Any = validate(model[key], src, {key: src.data[key]})  # type: ignore[arg-type]
        _add(catalog, src, key, getattr(parsed, key), layer)
    extra = set(src.data) - set(keys)
    if extra:
        key = sorted(extra)[0]
        hint = difflib.get_close_matches(key, ["accelerators", "systems", "quotes"], n=1)
        raise src.error((key,), f"unknown top-level key '{key}'" + (f"; did you mean '{hint[0]}'?" if hint else
                                                                   " (expected accelerators, systems or quotes)"))


def _check_references(catalog: Catalog) -> None:
    for sid, system in sorted(catalog.systems.items()):
        if system.accelerator not in catalog.accelerators:
            raise InputError(f"system '{sid}' refers to unknown accelerator '{system.accelerator}'",
                             file=catalog.origin["systems:" + sid], path="accelerator")
    for qid, quote in sorted(catalog.quotes.items()):
        if quote.system not in catalog.systems:
            raise InputError(f"quote '{qid}' refers to unknown system '{quote.system}'",
                             file=catalog.origin["quotes:" + qid], path="system")


def load_catalog(extra: Sequence[str | Path], *, bundled: Path | None = None) -> Catalog:
    """Bundled catalogs first, then each extra file or folder in order; later entries win by id."""
    catalog = Catalog()
    base = bundled or CATALOG_DIR
    for file in _files_in(base):
        if file.name == "assumptions.yaml":
            continue
        _load_one(catalog, file, "bundled")
    for entry in extra:
        path = Path(entry)
        if not path.exists():
            raise InputError("catalog file or folder not found", file=str(entry))
        for file in _files_in(path):
            _load_one(catalog, file, "user")
    _check_references(catalog)
    return catalog


__all__ = ["Accelerator", "System", "Quote", "Catalog", "load_catalog", "CATALOG_DIR", "MODES", "Mode",
           "Count"]
