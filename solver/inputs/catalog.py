"""The hardware catalog: accelerators, systems and quotes, each figure with its source and date.

Bundled files ship with the package (`bundled.py`); users layer their own files or folders on top
(`catalogs:` in a problem file, `--quotes`). In a user layer an entry whose `id` is already known changes only
the fields it gives — a new price is one line, not a copied quote — and an entry with a new `id` must be complete.
A `Catalog` is immutable: what-ifs (`Problem.with_quote`) make a new one that shares every unchanged entry.
"""

from __future__ import annotations

import functools
import math
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..errors import InputError, combined
from . import bundled
from .names import did_you_mean, meant, suggest
from .schema import Strict, validate, validate_all
from .units import HOURS_PER_MONTH, Date, MoneyOrZero, NonNegFloat, PositiveFloat
from .yamlsrc import CATALOG_LIMIT_ENV, Source, catalog_file_limit, load_file, parse_text, path_str, read_text

MAX_LEAD_DAYS = 3650
"""Longest lead time a quote may state (ten years): a longer one is a typo, and it bounds the planning calendar."""
PRICE_FIELDS: Mapping[str, str] = MappingProxyType({"buy": "price_usd", "cloud": "usd_per_gpu_hour",
                                                    "managed": "usd_per_month"})
"""The price field of a quote of each mode."""
PRICE_UNITS: Mapping[str, str] = MappingProxyType({"buy": "usd per node", "cloud": "usd per GPU-hour",
                                                   "managed": "usd per node-month"})



def price_text(price: float, mode: str) -> str:
    """A quote's price with its unit, as a buyer reads it: $6.79/GPU-h, $410,000/node, $14,500/node-month."""
    if mode == "cloud":
        return f"${price:,.2f}/GPU-h"
    return f"${price:,.0f}/node" + ("-month" if mode == "managed" else "")


Contract = Literal["on_demand", "reserved", "spot"]
SITE_FABRIC = "site"
"""The fabric every bought node is on: all of them land in the user's hall, on one network the user builds."""

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
    lead_time_days: NonNegFloat = Field(le=MAX_LEAD_DAYS)
    lead_time_p90_days: NonNegFloat | None = Field(default=None, le=MAX_LEAD_DAYS)
    commit_months: NonNegFloat = Field(default=0, le=120)
    contract: Contract | None = None
    """on_demand, reserved (a committed term, billed in full) or spot (preemptible); default: reserved when
    `commit_months` > 0, else on_demand."""
    max_term_months: PositiveFloat | None = Field(default=None, le=120)
    """The longest term the quote's price applies to (a reserved tier of a term ladder: "91-180 days" is
    commit_months 3, max_term_months 5.92). Hours past it are billed at `after_term_usd_per_gpu_hour`, never at the
    tier's own price; None: the price holds for any length."""
    after_term_usd_per_gpu_hour: PositiveFloat | None = Field(default=None, le=1e4)
    """The rate of the hours a run spends past `max_term_months` (the provider's rate for capacity beyond the tier,
    usually its on-demand rate); required with `max_term_months`."""
    next_tier: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9.\-_]*$")
    """The quote id of the provider's next, longer tier (often sold by contact: `contact_sales`), named in the
    warning of a plan that runs past this one's term."""
    contact_sales: bool = False
    """The tier has no list price: the provider quotes it on request (kind unpriced or estimate until it has,
    negotiated then); a plan that uses it is warned to get the quote."""
    fabric: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._\-]*$", max_length=80)
    """The interconnect domain one job can span (a provider's cluster); default: the quote alone. Not on buy
    quotes: bought nodes share the site's fabric."""
    deposit_pct: NonNegFloat | None = Field(default=None, le=100)
    """Bought hardware: the share of its price paid at order (%), for this quote instead of `money.deposit_pct`."""
    payment_terms_days: NonNegFloat | None = Field(default=None, le=365)
    """Bought hardware: days after delivery its balance is due, instead of `money.payment_terms_days`."""
    quoted_on: Date
    valid_until: Date
    kind: Literal["list", "street", "negotiated", "estimate", "unpriced"]
    source: str = Field(min_length=3)
    notes: str | None = None

    @classmethod
    def allowed_keys(cls, data: Any) -> list[str]:
        """The keys that apply to a quote of `data`'s mode (its own price field; the term fields for cloud only;
        no fabric or contract on a purchase): a suggestion is never a key the quote would then refuse."""
        keys = super().allowed_keys(data)
        mode = data.get("mode") if isinstance(data, dict) else None
        if mode not in PRICE_FIELDS:
            return keys
        skip = {f for m, f in PRICE_FIELDS.items() if m != mode}
        if mode != "cloud":
            skip |= {"max_term_months", "after_term_usd_per_gpu_hour", "next_tier"}
        if mode != "buy":
            skip |= {"deposit_pct", "payment_terms_days"}
        if mode == "buy":
            skip |= {"fabric", "contract"}
        return [k for k in keys if k not in skip]

    @classmethod
    def key_hints(cls, key: str, data: Any) -> list[str]:
        """A price-like key (`price`, `usd_per_hour`, `cost`) stands for the price field of the quote's mode."""
        mode = data.get("mode") if isinstance(data, dict) else None
        words = set(key.lower().replace("-", "_").split("_"))
        if mode in PRICE_FIELDS and words & {"price", "usd", "cost", "rate", "dollars", "hourly", "monthly"}:
            return [PRICE_FIELDS[mode]]
        return []

    @model_validator(mode="after")
    def _consistent(self) -> "Quote":
        price_field = PRICE_FIELDS[self.mode]
        for name in ("price_usd", "usd_per_gpu_hour", "usd_per_month"):
            given = getattr(self, name) is not None
            if name == price_field and not given and self.kind != "unpriced":
                raise ValueError(f"a {self.mode} quote needs {price_field} (or kind: unpriced)")
            if name == price_field and given and self.kind == "unpriced":
                raise ValueError(f"an unpriced quote has no {price_field}")
            if name != price_field and given:
                raise ValueError(f"{name} does not apply to a {self.mode} quote (use {price_field})")
        if self.mode != "buy" and (self.deposit_pct is not None or self.payment_terms_days is not None):
            raise ValueError("deposit_pct and payment_terms_days apply to bought hardware (mode: buy) only")
        if self.max_nodes < self.min_nodes:
            raise ValueError(f"max_nodes ({self.max_nodes}) is below min_nodes ({self.min_nodes})")
        if self.lead_time_p90_days is not None and self.lead_time_p90_days < self.lead_time_days:
            raise ValueError("lead_time_p90_days is below lead_time_days (the p50)")
        if self.lead_time_p90_days is not None and self.lead_time_p90_days > 0 and self.lead_time_days <= 0:
            raise ValueError("lead_time_days (the p50) must be at least 1 day when a p90 is given: the lead time "
                             "is a lognormal through both")
        if self.valid_until < self.quoted_on:
            raise ValueError(f"valid_until {self.valid_until} is before quoted_on {self.quoted_on}")
        if self.fabric is not None and self.mode == "buy":
            raise ValueError("fabric does not apply to a buy quote (bought nodes share your site's fabric)")
        if self.contract == "reserved" and self.commit_months <= 0:
            raise ValueError("a reserved contract needs commit_months > 0 (its term is billed in full)")
        if self.contract in ("on_demand", "spot") and self.commit_months > 0:
            raise ValueError(f"a {self.contract} quote has no commitment (commit_months must be 0; use "
                             "contract: reserved)")
        if self.contract == "spot" and self.mode != "cloud":
            raise ValueError("spot capacity is a cloud contract")
        if self.contract is not None and self.mode == "buy":
            raise ValueError("contract does not apply to a buy quote")
        self._check_term()
        return self

    def _check_term(self) -> None:
        terms = (self.max_term_months, self.after_term_usd_per_gpu_hour, self.next_tier)
        if any(v is not None for v in terms) and self.mode != "cloud":
            raise ValueError("max_term_months, after_term_usd_per_gpu_hour and next_tier apply to cloud quotes only")
        if (self.max_term_months is None) != (self.after_term_usd_per_gpu_hour is None):
            raise ValueError("max_term_months and after_term_usd_per_gpu_hour go together: the hours past a tier's "
                             "term are billed at some rate")
        if self.max_term_months is not None and self.max_term_months < self.commit_months:
            raise ValueError(f"max_term_months ({self.max_term_months:g}) is below commit_months "
                             f"({self.commit_months:g})")
        if self.next_tier is not None and self.max_term_months is None:
            raise ValueError("next_tier names the tier after this one's max_term_months, which is not given")
        if self.contact_sales and self.kind == "list":
            raise ValueError("a contact_sales tier has no list price: kind is unpriced, estimate, or negotiated once "
                             "the provider has quoted it")

    @property
    def term_hours(self) -> float:
        """Hours the quote's own price covers (`max_term_months`; infinite without one)."""
        return math.inf if self.max_term_months is None else self.max_term_months * HOURS_PER_MONTH

    @property
    def after_term_rate(self) -> float:
        """$/GPU-hour past the term (0 when the price holds for any length)."""
        return self.after_term_usd_per_gpu_hour or 0.0

    @property
    def priced(self) -> bool:
        return self.kind != "unpriced"

    @property
    def price(self) -> float:
        """The quote's price in its own unit (per node, per GPU-hour or per node-month)."""
        value = getattr(self, PRICE_FIELDS[self.mode])
        if value is None:
            raise ValueError(f"quote {self.id} has no price (kind: unpriced)")
        return float(value)

    @property
    def term(self) -> Contract | None:
        """The contract in force: given, or derived from the commitment; None for a purchase."""
        if self.mode == "buy":
            return None
        if self.contract is not None:
            return self.contract
        return "reserved" if self.commit_months > 0 else "on_demand"

    @property
    def preemptible(self) -> bool:
        return self.contract == "spot"

    @property
    def fabric_id(self) -> str:
        """The fabric the quote's nodes are on (see `fabric`)."""
        if self.mode == "buy":
            return SITE_FABRIC
        return self.fabric if self.fabric is not None else f"quote:{self.id}"

    def lead_days(self, confidence: str) -> float:
        if confidence == "p90" and self.lead_time_p90_days is not None:
            return self.lead_time_p90_days
        return self.lead_time_days

    def expired(self, as_of: date) -> bool:
        return self.valid_until < as_of

    def not_yet_quoted(self, as_of: date) -> bool:
        """Dated after the planning date: at `as_of` this offer did not exist yet."""
        return self.quoted_on > as_of


_KINDS = ("accelerators", "systems", "quotes")
_MODELS: Mapping[str, type[Strict]] = MappingProxyType({"accelerators": Accelerator, "systems": System,
                                                        "quotes": Quote})


@dataclass(frozen=True)
class Catalog:
    """Accelerators, systems and quotes by id, and where each came from (`file:line`, or the `--set` that changed
    it: `origin["quotes:<id>"]`, `origin["quotes:<id>.<field>"]`). Immutable; `with_quotes` derives a new one."""

    accelerators: Mapping[str, Accelerator]
    systems: Mapping[str, System]
    quotes: Mapping[str, Quote]
    origin: Mapping[str, str]
    files: tuple[str, ...] = ()

    def with_quotes(self, changed: Mapping[str, Quote], origins: Mapping[str, str] | None = None) -> "Catalog":
        """The same catalog with some quotes replaced (or added); every other entry is shared. A what-if of one
        quote in a marketplace catalog copies the two maps at C speed (`mappingproxy.copy`) and carries
        `offer_counts` over by difference, rather than walking every quote again."""
        quotes = _copy(self.quotes)
        quotes.update(changed)
        origin = _copy(self.origin)
        origin.update(origins or {})
        out = replace(self, quotes=MappingProxyType(quotes), origin=MappingProxyType(origin))
        counts: Counter[tuple[str, str]] | None = self.__dict__.get("offer_counts")
        if counts is not None:
            counts = counts.copy()
            for qid, q in changed.items():
                old = self.quotes.get(qid)
                if old is not None:
                    counts[(old.system, old.mode)] -= 1
                counts[(q.system, q.mode)] += 1
            out.__dict__["offer_counts"] = +counts
        # Made here once, on the catalog what-ifs derive from, then carried by difference: every what-if about a
        # few accelerators needs it, and on a derived catalog it would be made again for each.
        out.__dict__["quote_ids_by_system"] = _moved(self.quote_ids_by_system, self.quotes, changed)
        return out

    @cached_property
    def offer_counts(self) -> Counter[tuple[str, str]]:
        """How many quotes offer each (system, mode): its keys bound the estimates a problem will make."""
        return Counter((q.system, q.mode) for q in self.quotes.values())

    @cached_property
    def quote_ids_by_system(self) -> Mapping[str, tuple[str, ...]]:
        """The ids of each system's quotes, in id order: a what-if about a few accelerators reads only their quotes
        (`estimate/options.py`), not the whole of a marketplace catalog."""
        got: dict[str, list[str]] = {}
        for qid in sorted(self.quotes):
            got.setdefault(self.quotes[qid].system, []).append(qid)
        return MappingProxyType({sid: tuple(ids) for sid, ids in got.items()})

    def where_quote(self, qid: str, field: str | None = None) -> str:
        """Where a quote (or one of its fields) was given: `file:line` or a `--set`."""
        if field is not None and f"quotes:{qid}.{field}" in self.origin:
            return self.origin[f"quotes:{qid}.{field}"]
        return self.origin.get(f"quotes:{qid}", "catalog")


def _moved(by_system: Mapping[str, tuple[str, ...]], before: Mapping[str, Quote],
           changed: Mapping[str, Quote]) -> Mapping[str, tuple[str, ...]]:
    """`Catalog.quote_ids_by_system` after `changed` replaced or added quotes: only the systems they leave or join
    are rebuilt."""
    touched: dict[str, set[str]] = {}
    for qid, q in changed.items():
        old = before.get(qid)
        if old is not None and old.system != q.system:
            touched.setdefault(old.system, set(by_system.get(old.system, ()))).discard(qid)
        touched.setdefault(q.system, set(by_system.get(q.system, ()))).add(qid)
    out = dict(by_system)
    for sid, ids in touched.items():
        if ids:
            out[sid] = tuple(sorted(ids))
        else:
            out.pop(sid, None)
    return MappingProxyType(out)


def _copy(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return mapping.copy() if isinstance(mapping, (dict, MappingProxyType)) else dict(mapping)


def shown_path(file: str | Path) -> str:
    """A user file's path as the user would type it: relative to the working directory when it is below it."""
    text = str(file)
    try:
        rel = os.path.relpath(text)
    except ValueError:
        return text
    return text if rel.startswith("..") else rel


CATALOG_SUFFIXES = (".yaml", ".yml", ".json")
MAX_FOLDER_ENTRIES = 20_000
"""Most entries a `--quotes` folder and its subfolders may hold: `--quotes /` or `/proc` would otherwise walk the
machine for seconds (and meet processes that vanish under the walk) before reading anything."""
MAX_FOLDER_DEPTH = 16


def _files_in(path: Path) -> list[Path]:
    """The catalog files of a `--quotes` entry: the file itself, or a folder's `*.yaml`, `*.yml` and `*.json` files
    at any depth (links to folders not followed), sorted. A catalog-named entry that is not a regular file (a FIFO,
    a device, a socket, a link to one or a broken link) is an error, as naming it directly is; an entry that vanishes
    during the walk is skipped; a folder too big to be a catalog folder is refused before anything is read."""
    if not path.is_dir():
        return [path]
    found: list[Path] = []
    seen = 0
    stack = [(path, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if folder == path:
                raise InputError(f"cannot read the folder: {exc.strerror or exc}", file=shown_path(path)) from None
            continue   # a subfolder gone or unreadable (a process of /proc that ended)
        seen += len(entries)
        if seen > MAX_FOLDER_ENTRIES:
            raise InputError(f"more than {MAX_FOLDER_ENTRIES:,} entries under this folder: not a catalog folder; "
                             "pass the catalog files, or a folder of them", file=shown_path(path))
        for entry in entries:
            kept = _catalog_entry(entry)
            if kept == "dir" and depth < MAX_FOLDER_DEPTH:
                stack.append((Path(entry.path), depth + 1))
            elif kept == "file":
                found.append(Path(entry.path))
    return sorted(found)


def _catalog_entry(entry: os.DirEntry[str]) -> str:
    """'dir' (a real folder), 'file' (a catalog file to read), or '' (anything else, or gone)."""
    try:
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if Path(entry.name).suffix not in CATALOG_SUFFIXES:
            return ""
        if entry.is_file(follow_symlinks=True):
            return "file"
        if not entry.is_symlink() and not os.path.lexists(entry.path):
            return ""   # vanished
    except OSError:
        return ""
    raise InputError("not a regular file (a FIFO, device or socket, a link to one, or a broken link): remove it "
                     "from the folder or name the catalog files", file=shown_path(entry.path))


class _Layers:
    """The catalog as it is being read, layer after layer (bundled first, then each user file in order). A mistake
    in an entry is kept in `found` and the entry left out, so that every mistake of every file is reported at once
    (`catalog`); a file that is not a catalog at all stops the reading there."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Any]] = {k: {} for k in _KINDS}
        self.origin: dict[str, str] = {}
        self.files: list[str] = []
        self.found: list[InputError] = []
        self.failed: dict[str, set[str]] = {k: set() for k in _KINDS}
        """Ids of entries left out for a mistake: a reference to one is not a second mistake."""
        self.paths: dict[str, str] = {}
        """The field path of each entry in the file that gave it (`quotes[3]`), for messages."""

    def add_user(self, read: Callable[[], Source]) -> None:
        """Read a user file (`read()`) and add it; a file that cannot be read is a mistake, and the next is read."""
        try:
            src = read()
        except InputError as exc:
            self.found.append(exc)
            return
        self.add_file(src, user=True)

    def add_file(self, src: Source, user: bool) -> None:
        if not isinstance(src.data, dict):
            self.found.append(src.error((), "not a catalog file: expected a mapping with one of the keys "
                                            "accelerators, systems, quotes"))
            return
        keys = [k for k in _KINDS if k in src.data]
        if not keys:
            # The file may not be a catalog at all (a wrong path): name the file and the line, never its content.
            self.found.append(InputError("not a catalog file: expected a top-level key 'accelerators', 'systems' or "
                                         "'quotes'", file=src.file, line=src.line_of(())))
            return
        self.found += [src.error((k,), f"unknown top-level key '{k}'" + did_you_mean(k, _KINDS, listing=True))
                       for k in sorted(k for k in src.data if k not in keys)]
        for kind in keys:
            items = src.data[kind]
            if not isinstance(items, list):
                self.found.append(src.error((kind,), "expected a list of entries"))
                continue
            self._add_entries(src, kind, items, user)
        self.files.append(src.file)

    def _add_entries(self, src: Source, kind: str, items: list[Any], user: bool) -> None:
        table = self.tables[kind]
        seen: set[str] = set()
        model = _MODELS[kind]
        for i, item in enumerate(items):
            item_id = item.get("id") if isinstance(item, dict) else None
            mistake = self._entry_mistake(src, kind, i, item, seen, user)
            if mistake is not None:
                self.found.append(mistake)
                if isinstance(item_id, str):
                    self.failed[kind].add(item_id)
                continue
            assert isinstance(item_id, str)
            seen.add(item_id)
            data = item
            if item_id in table:  # a partial override: only the fields given change
                data = {**table[item_id].model_dump(by_alias=True), **item}
            value, errors = validate_all(model, src, data, base=(kind, i))
            if value is None:
                self.found += errors
                self.failed[kind].add(item_id)
                continue
            table[item_id] = value
            self.origin[kind + ":" + item_id] = f"{src.file}:{src.line_of((kind, i)) or '?'}"
            self.paths[kind + ":" + item_id] = path_str((kind, i))

    def _entry_mistake(self, src: Source, kind: str, i: int, item: Any, seen: set[str],
                       user: bool) -> InputError | None:
        """What is wrong with entry `i` before its fields are read: not a mapping, no id, an id given twice, a
        bundled id defined again, or the id of an existing entry mistyped (a change that would be read as a new,
        incomplete entry: the nearest ids are named, not the fields a new entry lacks)."""
        noun = kind[:-1]
        if not isinstance(item, dict):
            return src.error((kind, i), f"expected a mapping (one {noun}), got {type(item).__name__}")
        item_id = item.get("id")
        if not isinstance(item_id, str):
            return src.error((kind, i, "id"), "required field is missing" if item_id is None else
                             f"expected a string id, got {type(item_id).__name__}")
        if item_id in seen:
            return src.error((kind, i, "id"), f"duplicate {noun} id '{item_id}' in the same file")
        table = self.tables[kind]
        if item_id in table and not user:
            return src.error((kind, i, "id"), f"{noun} id '{item_id}' is already defined at "
                             f"{self.origin[kind + ':' + item_id]}")
        if item_id in table:
            return None
        model = _MODELS[kind]
        lacking = [f.alias or name for name, f in model.model_fields.items()
                   if f.is_required() and (f.alias or name) not in item]
        hints = suggest(item_id, table) if lacking else []
        if not hints:
            return None
        return src.error((kind, i, "id"), f"{noun} id '{item_id}' matches no catalog {noun}{meant(hints)} (an entry "
                         f"with a new id is a new {noun}, and would need {', '.join(lacking)})")

    def catalog(self) -> Catalog:
        accelerators, systems, quotes = (MappingProxyType(dict(sorted(self.tables[k].items()))) for k in _KINDS)
        cat = Catalog(accelerators, systems, quotes, origin=MappingProxyType(dict(self.origin)),
                      files=tuple(self.files))
        found = self.found + _reference_errors(cat, self.failed, self.paths)
        if found:
            raise combined(found)
        return cat


def _at(origin: str, path: str, message: str) -> InputError:
    """An error at an entry's `file:line` origin (a file error, ordered with the file's others)."""
    file, _, line = origin.rpartition(":")
    if file and line.isdigit():
        return InputError(message, file=file, line=int(line), path=path)
    return InputError(message, origin=origin, path=path)


def _reference_errors(catalog: Catalog, failed: Mapping[str, set[str]], paths: Mapping[str, str]) -> list[InputError]:
    """Systems naming an unknown accelerator and quotes naming an unknown system, one error each, at the line of the
    entry (a reference to an entry left out for its own mistake is not reported again)."""
    found = [_at(catalog.origin["systems:" + sid], paths["systems:" + sid] + ".accelerator", f"system '{sid}' refers "
                 f"to unknown accelerator '{system.accelerator}'" + did_you_mean(system.accelerator,
                                                                                 catalog.accelerators))
             for sid, system in sorted(catalog.systems.items())
             if system.accelerator not in catalog.accelerators and system.accelerator not in failed["accelerators"]]
    found += [_at(catalog.origin["quotes:" + qid], paths["quotes:" + qid] + ".system", f"quote '{qid}' refers to "
                  f"unknown system '{quote.system}'" + did_you_mean(quote.system, catalog.systems))
              for qid, quote in sorted(catalog.quotes.items())
              if quote.system not in catalog.systems and quote.system not in failed["systems"]]
    return found


def load_catalog(extra: Sequence[str | Path] = (), *, shown: Sequence[str] | None = None,
                 texts: Sequence[tuple[str, str]] = ()) -> Catalog:
    """Bundled catalogs first, then each extra file or folder in order, then `texts` (name, YAML text) in order
    (see module docstring).

    `shown` gives the name each extra entry is reported under (default: the path as given). `texts` are the files of
    a catalog carried as data (`catalog_texts`), for a worker that has only the data, not the user's files."""
    layers = _Layers()
    for name, node in bundled.catalog_files():
        layers.add_file(bundled.load_traversable(node, name), user=False)
    limit = catalog_file_limit() if extra else 0
    for k, entry in enumerate(extra):
        path = Path(entry)
        label = shown[k] if shown is not None else str(entry)
        if not path.exists():
            layers.found.append(InputError("catalog file or folder not found", file=label))
            continue
        try:
            files = _files_in(path)
        except InputError as exc:
            layers.found.append(exc)
            continue
        for file in files:
            layers.add_user(functools.partial(load_file, file, shown=shown_path(file), max_bytes=limit,
                                              limit_hint=LIMIT_HINT))
    for name, text in texts:
        layers.add_user(functools.partial(parse_text, text, name))
    return layers.catalog()


def catalog_texts(entries: Sequence[str | Path]) -> tuple[tuple[str, str], ...]:
    """The user catalog files of these entries (files or folders), in the order `load_catalog` layers them, as
    (shown name, text): the catalog as plain data."""
    out: list[tuple[str, str]] = []
    limit = catalog_file_limit() if entries else 0
    for entry in entries:
        path = Path(entry)
        if not path.exists():
            raise InputError("catalog file or folder not found", file=str(entry))
        for file in _files_in(path):
            out.append((shown_path(file), read_text(file, shown=shown_path(file), max_bytes=limit,
                                                    limit_hint=LIMIT_HINT)))
    return tuple(out)


LIMIT_HINT = f" (catalog and quote files: set {CATALOG_LIMIT_ENV} to a larger number of MB)"


def override_quote(catalog: Catalog, qid: str, changes: Mapping[str, Any], origin: str,
                   field_origins: Mapping[str, str] | None = None) -> Catalog:
    """The catalog with fields of one quote changed (`--set quotes.<id>.<field>=VALUE`s, or a what-if), validated
    together exactly like a quote file entry (a change of kind and price is one change); errors name `origin`, and
    each field remembers the change that gave it (`field_origins`, default `origin`)."""
    if qid not in catalog.quotes:
        raise InputError(f"unknown quote '{qid}'" + did_you_mean(qid, catalog.quotes), origin=origin)
    data = {**catalog.quotes[qid].model_dump(by_alias=True), **changes}
    src = Source(file=origin, data={"quotes": {qid: data}}, overridden={("quotes",): origin})
    quote = validate(Quote, src, data, base=("quotes", qid))
    origins = {f"quotes:{qid}.{k}": (field_origins or {}).get(k, origin) for k in changes}
    return catalog.with_quotes({qid: quote}, origins)


__all__ = ["Accelerator", "System", "Quote", "Catalog", "Contract", "SITE_FABRIC", "load_catalog", "override_quote",
           "MODES", "Mode", "catalog_texts", "PRICE_FIELDS", "PRICE_UNITS", "price_text", "MAX_LEAD_DAYS", "shown_path", "path_str"]
