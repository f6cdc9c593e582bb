"""`Problem`: everything one planning question consists of, validated once, immutable, and cheap to vary.

A problem is the problem file as validated (`spec`), the catalog it plans over (bundled files, the file's
`catalogs:` and `--quotes`, with `--set quotes.<id>.<field>` changes), the modelling assumptions with its `risk:`
overrides, the planning date, and where every value came from. Every later stage reads it and none changes it:
a what-if (a `--set`, a relaxation, a why-not price, a sensitivity sweep) is a new `Problem` made by
`with_changes`/`with_quote`/`with_catalog`, which re-validates only what changed — no file is read again, and
the catalog objects of the original are shared, never mutated.

Everything that can be wrong with the input is found here, before any long work: unknown keys, bad values,
unknown ids in policies and rules, dates outside the supported range, and a node grid whose work is out of bounds.
All of it is reported at once (`_build`): the sections that are valid on their own are still checked against the
catalog when another section has a mistake (`SpecParts.salvage`), and one mistake is never reported twice.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from .assumptions import AssumptionSet, load_assumptions
from .catalog import Catalog, catalog_texts, load_catalog, override_quote
from ..errors import InputError, combined
from .names import did_you_mean
from .overrides import Change, apply_to_data, parse_sets
from .rules import referenced_names
from .schema import Strict, validate_all
from .spec import ProblemSpec, Rule, Schedule, Selection
from .units import Date
from .yamlsrc import PathT, Source, load_file, path_str

T = TypeVar("T")

MAX_POINTS = 150_000
"""Most (option, node count) points a problem may ask to be estimated: each one is a memory, time and cost
estimate with its price templates kept in memory (~4 kB measured: 25,752 points took ~100 MB above the
interpreter and CP-SAT, bench/README.md), so this bounds a run near 600 MB before the work starts. The bundled
catalog with the bundled grid gives about 10,000."""


@dataclass(frozen=True)
class Problem:
    """A validated planning problem (see module docstring). Build with `load_problem`; vary with `with_*`."""

    spec: ProblemSpec
    catalog: Catalog
    assumptions: AssumptionSet
    as_of: date
    as_of_defaulted: bool
    source: Source
    quote_files: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The problem file's data before any change (changes are always re-applied to a copy of it)."""
    files_catalog: Catalog | None = field(default=None, repr=False, compare=False)
    """The catalog as read from its files, before `quotes.*` changes."""
    catalog_entries: tuple[str, ...] = ()
    """The problem's `catalogs:` entries, resolved against the problem file's folder."""

    @property
    def file(self) -> str:
        return self.source.file

    @property
    def earliest_start(self) -> date:
        return self.spec.schedule.earliest_start or self.as_of

    @property
    def sets(self) -> tuple[str, ...]:
        """The `--set` expressions applied, as given (what-ifs made by later stages are not listed)."""
        return tuple(c.origin[len("--set "):] for c in self.changes if c.origin.startswith("--set "))

    def where(self, path: PathT) -> str:
        """`file:line` of a problem path, or the `--set` that gave it its value."""
        return self.source.where(path)

    def with_changes(self, changes: Sequence[Change]) -> "Problem":
        """The problem with these changes applied after the ones it already has, validated."""
        if not changes:
            return self
        return _build(self, self.changes + tuple(changes), self.files_catalog)

    def with_sets(self, exprs: Sequence[str]) -> "Problem":
        return self.with_changes(parse_sets(exprs))

    def with_quote(self, qid: str, fields: Mapping[str, Any], origin: str = "what-if") -> "Problem":
        """The problem with fields of one catalog quote changed, validated like a quote file entry."""
        return self.with_changes([Change(("quotes", qid, k), v, origin) for k, v in fields.items()])

    def with_catalog(self, catalog: Catalog) -> "Problem":
        """The problem over another catalog (a sweep that shifts every quote); its `quotes.*` changes still apply."""
        return _build(self, self.changes, catalog)


def _check_numbers(src: Source, node: Any, path: PathT) -> None:
    """Every number, from the file or from a change, is finite and of a plannable magnitude (`number_errors`)."""
    found = number_errors(src, node, path)
    if found:
        raise combined(found)


def number_errors(src: Source, node: Any, path: PathT) -> list[InputError]:
    """The numbers of `node` that are not finite or not of a plannable magnitude, one error each."""
    if isinstance(node, bool):
        return []
    if isinstance(node, dict):
        return [e for k, v in node.items() for e in number_errors(src, v, path + (k,))]
    if isinstance(node, list):
        return [e for i, v in enumerate(node) for e in number_errors(src, v, path + (i,))]
    if isinstance(node, int) and abs(node) > 10 ** 18:
        return [src.error(path, f"number with {len(str(abs(node)))} digits is absurdly large (limit 1e18)")]
    if isinstance(node, float) and not math.isfinite(node):
        return [src.error(path, f"expected a finite number, got {node}")]
    if isinstance(node, float) and abs(node) > 1e18:
        return [src.error(path, f"{node:g} is absurdly large (limit 1e18)")]
    return []


@dataclass(frozen=True)
class SpecParts:
    """The parts of a problem file the checks after validation read (dates, catalogs, ids in policy and rules):
    the validated spec's, or — when the file has mistakes — those of its sections that are valid on their own, so
    that one run reports the mistakes of every section (`salvage`), and none twice."""

    as_of: date | None = None
    schedule: Schedule | None = None
    catalogs: tuple[str, ...] | None = None
    selections: Mapping[str, Selection] = field(default_factory=dict)
    """`policy.accelerators` and `policy.vendors`, by key."""
    measured_mfu: Mapping[str, Any] | None = None
    rules: tuple[tuple[int, Rule], ...] = ()

    @staticmethod
    def of(spec: ProblemSpec) -> "SpecParts":
        selections = {"accelerators": spec.policy.accelerators, "vendors": spec.policy.vendors}
        return SpecParts(spec.as_of, spec.schedule, tuple(spec.catalogs), selections, spec.workload.measured_mfu,
                         tuple(enumerate(spec.rules)))

    @staticmethod
    def salvage(data: Mapping[str, Any], found: Sequence[InputError]) -> "SpecParts":
        """The sections of `data` without a mistake in `found`, each validated alone (None where invalid)."""
        bad = [e.path for e in found if e.path]

        def clean(path: PathT) -> bool:
            here = path_str(path)
            return not any(p == here or p.startswith((here + ".", here + "[")) or here.startswith((p + ".", p + "["))
                           for p in bad)

        raw_rules = data.get("rules") if isinstance(data.get("rules"), list) else []
        rules = [(i, _valid(Rule, r)) for i, r in enumerate(raw_rules) if clean(("rules", i))]
        catalogs = data.get("catalogs", [])
        workload = data.get("workload") if isinstance(data.get("workload"), dict) else {}
        mfu = workload.get("measured_mfu")
        policy = data.get("policy") if isinstance(data.get("policy"), dict) else {}
        selections = {k: _valid(Selection, policy.get(k) or {}) for k in ("accelerators", "vendors")
                      if clean(("policy", k))}
        return SpecParts(
            as_of=getattr(_valid(_AsOf, {"as_of": data.get("as_of")}), "as_of", None) if clean(("as_of",)) else None,
            schedule=_valid(Schedule, data.get("schedule") or {}) if clean(("schedule",)) else None,
            catalogs=tuple(catalogs) if clean(("catalogs",)) and isinstance(catalogs, list)
            and all(isinstance(c, str) for c in catalogs) else None,
            selections={k: v for k, v in selections.items() if v is not None},
            measured_mfu=mfu if isinstance(mfu, dict) and clean(("workload", "measured_mfu")) else None,
            rules=tuple((i, r) for i, r in rules if r is not None))


class _AsOf(Strict):
    as_of: Date | None = None


def _valid(model: type[Any], data: Any) -> Any:
    """`data` as `model`, or None (its mistakes are reported by the whole file's validation)."""
    try:
        return model.model_validate(data)
    except (ValidationError, ValueError, TypeError):
        return None


def _resolve_catalogs(catalogs: Sequence[str], src: Source) -> tuple[tuple[str, ...], list[InputError]]:
    base = Path(src.file).parent
    out: list[str] = []
    found: list[InputError] = []
    for i, entry in enumerate(catalogs):
        p = Path(entry)
        p = p if p.is_absolute() else base / p
        if not p.exists():
            found.append(src.error(("catalogs", i), f"catalog file or folder not found: {entry}"))
        out.append(str(p))
    return tuple(out), found


def _date_errors(parts: SpecParts, src: Source, as_of: date) -> list[InputError]:
    if parts.schedule is None:
        return []
    start = parts.schedule.earliest_start
    found = []
    for key in ("deadline", "late_after"):
        day = getattr(parts.schedule, key)
        if day and day <= (start or as_of):
            found.append(src.error(("schedule", key), f"{key} {day} is not after "
                                   f"{'earliest_start' if start else 'as_of'} {start or as_of}"))
    return found


def check_references(spec: ProblemSpec, src: Source, cat: Catalog) -> None:
    """Ids in policy and rules must exist in the catalog: a typo must not silently match nothing."""
    found = reference_errors(SpecParts.of(spec), src, cat)
    if found:
        raise combined(found)


def reference_errors(parts: SpecParts, src: Source, cat: Catalog) -> list[InputError]:
    """Every id in the policy, `measured_mfu` and the rules that the catalog does not have, one error each, with
    the nearest ids."""
    known: dict[str, list[str]] = {
        "accelerator": sorted(cat.accelerators), "system": sorted(cat.systems), "quote": sorted(cat.quotes),
        "vendor": sorted({a.vendor for a in cat.accelerators.values()}),
        "class": ["consumer", "workstation", "datacenter", "tpu", "wafer"], "mode": ["buy", "cloud", "managed"],
        "cooling": ["air", "liquid"], "software": ["cuda", "rocm", "xla", "cerebras", "synapse"],
        "network": sorted({s.network for s in cat.systems.values()}),
    }
    lowered = {kind: {k.lower() for k in names} for kind, names in known.items()}
    refs: list[tuple[str, str, PathT]] = []
    for kind, selection in (("accelerator", "accelerators"), ("vendor", "vendors")):
        for key in ("include", "exclude"):
            values = getattr(parts.selections[selection], key) if selection in parts.selections else []
            refs += [(kind, v, ("policy", selection, key, i)) for i, v in enumerate(values)]
    refs += [("accelerator", acc, ("workload", "measured_mfu", acc)) for acc in parts.measured_mfu or {}]
    for r_i, rule in parts.rules:
        refs += [(kind, v, ("rules", r_i, "when", kind)) for kind, values in referenced_names(rule).items()
                 for v in values]
    return [src.error(path, f"unknown {kind} '{value}'" + did_you_mean(value, known[kind]))
            for kind, value, path in refs
            if (value not in known[kind] if path[1] == "measured_mfu" else value.lower() not in lowered[kind])]


def _check_work(problem: Problem) -> None:
    """The number of points the estimates will create, bounded before any of them is made (see MAX_POINTS)."""
    counts = len(problem.assumptions.values.node_grid.counts())
    options = len(problem.catalog.offer_counts)
    if counts * options > MAX_POINTS:
        raise problem.source.error(("risk", "node_grid"), f"{counts:,} node counts x {options:,} catalog options = "
                                   f"{counts * options:,} estimates; at most {MAX_POINTS:,} (use a coarser "
                                   "risk.node_grid or fewer quotes)")


def _build(base: Problem, changes: tuple[Change, ...], files_catalog: Catalog | None) -> Problem:
    """Validate `base.raw` with `changes` applied (see module docstring). `files_catalog` is reused when the
    problem's `catalogs:` entries did not change; otherwise the catalog files are read. Every mistake found is
    reported at once (`errors.combined`): the file's, its `--set`s', its quote files' and its ids'."""
    data, replaced = apply_to_data(dict(base.raw), [c for c in changes if c.quote is None])
    src = Source(base.source.file, data, base.source.lines, replaced)
    found = number_errors(src, data, ())
    spec, errors = validate_all(ProblemSpec, src)
    found += errors
    parts = SpecParts.of(spec) if spec is not None else SpecParts.salvage(data, found)
    as_of = parts.as_of or base.as_of
    found += _date_errors(parts, src, as_of)
    catalog: Catalog | None = None
    entries: tuple[str, ...] = ()
    in_catalogs: list[InputError] = []   # the quote files' mistakes and the `quotes.*` changes': after the file's
    if parts.catalogs is not None:
        entries, errors = _resolve_catalogs(parts.catalogs, src)
        found += errors
        if not errors:
            catalog, files_catalog = _catalog_of(base, entries, parts.catalogs, files_catalog, changes, in_catalogs)
    risk = data.get("risk") if isinstance(data.get("risk"), dict) else None
    assumptions = _attempt(found, lambda: load_assumptions(risk, src=src))
    if catalog is not None:
        found += reference_errors(parts, src, catalog)
    if found or in_catalogs or spec is None or catalog is None or assumptions is None:
        raise combined(found + in_catalogs)
    problem = Problem(spec, catalog, assumptions, as_of, spec.as_of is None, src, base.quote_files, changes,
                      base.raw, files_catalog, entries)
    _check_work(problem)
    return problem


def _attempt(found: list[InputError], make: Callable[[], T]) -> T | None:
    """`make()`, or None with its mistakes added to `found`."""
    try:
        return make()
    except InputError as exc:
        found.append(exc)
        return None


def _catalog_of(base: Problem, entries: tuple[str, ...], shown: Sequence[str], files_catalog: Catalog | None,
                changes: tuple[Change, ...], found: list[InputError]) -> tuple[Catalog | None, Catalog | None]:
    """The catalog the problem plans over (its files', read unless `files_catalog` has them, with the `quotes.*`
    changes), and its files' catalog; mistakes are added to `found` (None: the files could not be read)."""
    if files_catalog is None or entries != base.catalog_entries:
        files_catalog = _attempt(found, lambda: load_catalog(entries + base.quote_files,
                                                             shown=list(shown) + list(base.quote_files)))
        if files_catalog is None:
            return None, None
    catalog = files_catalog
    per_quote: dict[str, list[Change]] = {}
    for ch in changes:
        if ch.quote is not None:
            per_quote.setdefault(ch.quote[0], []).append(ch)
    for qid, chs in per_quote.items():
        changed = _attempt(found, functools.partial(override_quote, catalog, qid,
                                                    {c.quote[1]: c.value for c in chs if c.quote}, chs[-1].origin,
                                                    {c.quote[1]: c.origin for c in chs if c.quote}))
        catalog = changed if changed is not None else catalog
    return catalog, files_catalog


def load_problem(file: str | Path, sets: Sequence[str] = (), *, quotes: Sequence[str] = (),
                 today: date | None = None) -> Problem:
    """Load and validate a problem file with `--set` expressions and extra quote files (`--quotes`).

    Raises `InputError` (one line: file and line or `--set`, field path, what was expected) on any problem; an
    `InputErrors` (one such line per mistake) when there are several.
    """
    return load_problem_source(load_file(file), sets, quotes=quotes, today=today)


def load_problem_source(src: Source, sets: Sequence[str] = (), *, quotes: Sequence[str] = (),
                        today: date | None = None) -> Problem:
    """`load_problem` of a file already read."""
    require_problem_shape(src)
    if isinstance(src.data, dict) and "workloads" in src.data and "workload" not in src.data:
        raise src.error(("workloads",), "this is a program file (several workloads): read it with "
                        "`inputs.loading.load_any` or `inputs.program.load_program`")
    if not isinstance(src.data, dict):
        raise src.error((), f"expected a mapping with keys name, workload, schedule …, got {type(src.data).__name__}")
    changes = parse_sets(sets)
    seed = Problem(spec=None, catalog=None, assumptions=None, as_of=today or date.today(),  # type: ignore[arg-type]
                   as_of_defaulted=True, source=src, quote_files=tuple(str(q) for q in quotes), raw=src.data)
    return _build(seed, changes, None)


def require_problem_shape(src: Source) -> None:
    """Refuse a mapping with none of a problem's or a program's top-level keys — not recognisably a problem file —
    naming the file and what was expected, never quoting its content: a wrong path (`plan solve /etc/shadow`, whose
    lines YAML reads as keys) must not print a line of it."""
    known = set(ProblemSpec.model_fields) | {"workloads", "program"}
    if not isinstance(src.data, dict) or any(isinstance(k, str) and k in known for k in src.data):
        return   # not a mapping: the loader names the type it got (never the content)
    raise InputError("not a problem file: expected a YAML mapping with top-level keys such as name, workload "
                     "(or workloads) and schedule", file=src.file)


@dataclass(frozen=True)
class PortableProblem:
    """A problem as plain data, for work that runs where the user's files are not (another process, a Ray cluster):
    the problem file's data without its `catalogs:` entries, the user catalog files they named (and `--quotes`) as
    text in layering order, its changes (`--set`s and what-ifs: paths and values), and the planning date.
    `problem()` rebuilds the same `Problem` (the same validated spec, catalog and assumptions) without touching a
    file."""

    name: str
    data: Mapping[str, Any]
    quote_texts: tuple[tuple[str, str], ...]
    changes: tuple[Change, ...]
    today: date

    def problem(self, more_sets: Sequence[str] = ()) -> Problem:
        src = Source(self.name, dict(self.data))
        seed = Problem(spec=None, catalog=None, assumptions=None, as_of=self.today,  # type: ignore[arg-type]
                       as_of_defaulted=True, source=src, raw=dict(self.data))
        return _build(seed, self.changes + parse_sets(more_sets), catalog_of_texts(self.quote_texts))


@functools.lru_cache(maxsize=4)
def catalog_of_texts(texts: tuple[tuple[str, str], ...]) -> Catalog:
    """The catalog of these user files over the bundled ones, read once per process: a worker solves many units
    of one problem, and reading the catalogs (parsing and validating every file) would otherwise be repeated for
    each (measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). Catalogs are
    immutable, so the units share it safely."""
    return load_catalog(texts=texts)


def portable(problem: Problem) -> PortableProblem:
    """`problem` as plain data (see `PortableProblem`); its user catalog files are read once more, here, and must
    still say what they said (a problem over a catalog swapped in memory, `with_catalog`, is not portable)."""
    texts = catalog_texts(problem.catalog_entries + problem.quote_files)
    if problem.files_catalog is not None and \
            dict(load_catalog(texts=texts).quotes) != dict(problem.files_catalog.quotes):
        raise InputError("the catalog files changed since they were read (or the catalog was replaced in "
                         "memory); run the command again", file=problem.file)
    data = {k: v for k, v in problem.raw.items() if k != "catalogs"}
    return PortableProblem(problem.file, data, texts, problem.changes, problem.as_of)


__all__ = ["Problem", "PortableProblem", "portable", "load_problem", "load_problem_source", "check_references",
           "reference_errors", "number_errors", "SpecParts",
           "MAX_POINTS"]
