"""A training *program*: several workloads on one calendar, sharing the site, the budget and bought hardware.

A program file is a problem file with `workloads:` (a list) in place of `workload:`; every other section keeps its
meaning and applies to the whole program. Each workload has an `id`, today's `workload:` keys, and optionally its own
`schedule:` (within the program's), a `policy:` that narrows the program's (modes, accelerators, vendors),
`after:` (it starts when those have finished), `decide_after:` (its hardware is ordered, reserved or rented only
once those have finished) and `same_hardware_as:` (it runs on the same accelerator as another).
Two sections gain program-only keys: `site.power_steps` (the hall's IT power limit from a date on) and
`budget.per_quarter_usd` (caps on cash committed per calendar quarter, `2027-Q1: 30M`).

`load_program` validates the file like `load_problem` (one line per error: file, line, field path) and derives one
ordinary `Problem` per workload, over the same catalog, so that the estimators of a single run price each workload's
options unchanged. A derived problem has no budget (the budget is the program's) and the program's schedule narrowed
by the workload's own. `--set workloads.<id>.<path>=…` addresses a workload by its id.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ..errors import InputError, combined
from .names import did_you_mean
from .overrides import Change, apply_to_data, parse_sets
from .catalog import Catalog, catalog_texts
from .problem import Problem, _build, catalog_of_texts, number_errors
from .rules import quote_ids
from .schema import Strict, validate_all
from .spec import Budget, CostObjective, Policy, Rule, Schedule, Selection, Site, Workload
from .units import Date, Money, PositiveFloat
from .yamlsrc import PathT, Source, load_file

MAX_WORKLOADS = 50
"""Most workloads one program may hold: each is a set of candidate intervals in one CP-SAT model, and a program of
a lab's year is a handful to a few dozen runs."""
MAX_POWER_STEPS = 100
MAX_QUARTERS = 80
"""Most quarterly caps (twenty years)."""
MAX_HORIZON_DAYS = 3660
"""Longest program calendar, in days (ten years): the model counts days, and bought hardware's holding cost is a
table over this many days per quote."""

_QUARTER = re.compile(r"^(\d{4})-Q([1-4])$")


class PowerStep(Strict):
    from_: Date = Field(alias="from")
    it_power_kw: PositiveFloat = Field(le=10_000_000)


class ProgramSite(Site):
    power_steps: list[PowerStep] = Field(default_factory=list, max_length=MAX_POWER_STEPS)
    """The hall's IT power limit from each `from` date on (a new feed connected); `it_power_kw` holds before."""

    @model_validator(mode="after")
    def _ordered(self) -> "ProgramSite":
        days = [s.from_ for s in self.power_steps]
        if days != sorted(set(days)):
            raise ValueError("power_steps must be in date order, one per date")
        return self


class ProgramBudget(Budget):
    per_quarter_usd: dict[str, Money] = Field(default_factory=dict, max_length=MAX_QUARTERS)
    """Cash committed per calendar quarter: bought lots in the quarter they are ordered, rent in the quarters a
    rental runs (spread evenly over its days)."""

    @field_validator("per_quarter_usd")
    @classmethod
    def _quarters(cls, v: dict[str, float]) -> dict[str, float]:
        for key in v:
            if not _QUARTER.match(str(key)):
                raise ValueError(f"quarter '{key}' is not like 2027-Q1")
        return v


class WorkloadPolicy(Strict):
    """What one workload may use, within the program's policy (never wider)."""

    modes: list[Literal["buy", "cloud", "managed"]] | None = Field(default=None, min_length=1)
    accelerators: Selection | None = None
    vendors: Selection | None = None


class ProgramWorkload(Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-]*$", max_length=60)
    workload: Workload
    schedule: Schedule = Field(default_factory=Schedule)
    policy: WorkloadPolicy = Field(default_factory=WorkloadPolicy)
    after: list[str] = Field(default_factory=list, max_length=MAX_WORKLOADS)
    decide_after: list[str] = Field(default_factory=list, max_length=MAX_WORKLOADS)
    """A decision gate: the workload's hardware is ordered (bought) or committed (rented) on or after the day these
    workloads finish, so it can be chosen on what they showed (a bake-off before the order)."""
    same_hardware_as: str | None = None
    note: str | None = None


class ProgramSpec(Strict):
    """A program file as validated (see module docstring)."""

    name: str = Field(min_length=1, max_length=200)
    description: str | None = None
    as_of: Date | None = None
    catalogs: list[str] = Field(default_factory=list)
    workloads: list[ProgramWorkload] = Field(min_length=1, max_length=MAX_WORKLOADS)
    schedule: Schedule = Field(default_factory=Schedule)
    site: ProgramSite | None = None
    budget: ProgramBudget = Field(default_factory=ProgramBudget)
    policy: Policy = Field(default_factory=Policy)
    risk: dict[str, Any] = Field(default_factory=dict)
    rules: list[Rule] = Field(default_factory=list)
    objective: Annotated[Union[Annotated[Literal["cost", "time"], Tag("word")],
                               Annotated[CostObjective, Tag("weighted")]],
                         Discriminator(lambda v: "word" if isinstance(v, str) else "weighted")] = "cost"


def is_program_data(data: Any) -> bool:
    return isinstance(data, dict) and "workloads" in data


@dataclass(frozen=True)
class ProgramProblem:
    """A validated program: the spec, one derived `Problem` per workload (in file order), where values came from."""

    spec: ProgramSpec
    workloads: tuple[tuple[ProgramWorkload, Problem], ...]
    as_of: date
    source: Source
    changes: tuple[Change, ...] = ()
    original: Source | None = field(default=None, repr=False, compare=False)
    """The file as read, before any change (a what-if re-applies every change to it)."""
    quote_files: tuple[str, ...] = ()
    today: date | None = None
    texts_catalog: Catalog | None = field(default=None, repr=False, compare=False)
    """The catalog of a program rebuilt from plain data (`PortableProgram`), reused by its what-ifs."""

    @property
    def file(self) -> str:
        return self.source.file

    def with_changes(self, changes: Sequence[Change]) -> "ProgramProblem":
        """The program with these changes applied after the ones it already has, validated like the file (a
        sensitivity value, a sweep point). The catalog files are read again only if `catalogs:` changed."""
        if not changes:
            return self
        assert self.original is not None and self.today is not None
        return build_program(self.original, self.changes + tuple(changes), quotes=self.quote_files,
                             today=self.today, catalog=self.texts_catalog or self.first.files_catalog,
                             entries=self.first.catalog_entries)

    def with_sets(self, exprs: Sequence[str]) -> "ProgramProblem":
        return self.with_changes(parse_sets(exprs))

    @property
    def first(self) -> Problem:
        """The first workload's problem: catalog, assumptions and site are the program's."""
        return self.workloads[0][1]

    def problem_of(self, wid: str) -> Problem:
        for item, prob in self.workloads:
            if item.id == wid:
                return prob
        raise KeyError(wid)

    def where(self, path: PathT) -> str:
        return self.source.where(path)

    def index_of(self, wid: str) -> int:
        return [w.id for w, _ in self.workloads].index(wid)


def quarter_bounds(label: str) -> tuple[date, date]:
    """[first day, first day of the next quarter) of `2027-Q2`."""
    m = _QUARTER.match(label)
    if not m:
        raise ValueError(label)
    year, q = int(m.group(1)), int(m.group(2))
    first = date(year, 3 * (q - 1) + 1, 1)
    nxt = date(year + 1, 1, 1) if q == 4 else date(year, 3 * q + 1, 1)
    return first, nxt


def quarter_of(day: date) -> str:
    return f"{day.year}-Q{(day.month - 1) // 3 + 1}"


def _by_id(changes: Sequence[Change], data: Mapping[str, Any]) -> list[Change]:
    """`workloads.<id>.…` paths rewritten to list indices (ids are what users and explanations name)."""
    items = data.get("workloads")
    ids = [w.get("id") if isinstance(w, dict) else None for w in items] if isinstance(items, list) else []
    out: list[Change] = []
    for ch in changes:
        p = ch.path
        if len(p) >= 2 and p[0] == "workloads" and isinstance(p[1], str):
            if p[1] not in ids:
                raise InputError(f"no workload with id '{p[1]}'" + did_you_mean(p[1], [str(i) for i in ids]),
                                 origin=ch.origin)
            ch = Change(("workloads", ids.index(p[1])) + tuple(p[2:]), ch.value, ch.origin)
        out.append(ch)
    return out


def _check_links(spec: ProgramSpec, src: Source) -> None:
    """Ids are unique, `after`/`decide_after`/`same_hardware_as` name other workloads, and precedences (both kinds:
    a decision gate also orders the two runs) have no cycle."""
    ids = [w.id for w in spec.workloads]
    for i, w in enumerate(spec.workloads):
        if ids.index(w.id) != i:
            raise src.error(("workloads", i, "id"), f"workload id '{w.id}' appears twice")
        for key in LINKS:
            for j, a in enumerate(getattr(w, key)):
                if a not in ids or a == w.id:
                    raise src.error(("workloads", i, key, j), f"'{a}' is not another workload's id"
                                    + did_you_mean(a, [x for x in ids if x != w.id]))
        if w.same_hardware_as is not None and (w.same_hardware_as not in ids or w.same_hardware_as == w.id):
            raise src.error(("workloads", i, "same_hardware_as"), f"'{w.same_hardware_as}' is not another "
                            "workload's id" + did_you_mean(w.same_hardware_as, [x for x in ids if x != w.id]))
    _check_cycles(spec, src)


LINKS = ("after", "decide_after")
"""The fields that name workloads to wait for: the run's start (`after`), the order of its hardware
(`decide_after`)."""


def _check_cycles(spec: ProgramSpec, src: Source) -> None:
    """No workload waits, through `after` and `decide_after` links, for itself; the error names the field of the
    first link of the cycle."""
    ids = [w.id for w in spec.workloads]
    edges = {w.id: [(a, key) for key in LINKS for a in getattr(w, key)] for w in spec.workloads}
    state: dict[str, int] = {}

    def visit(wid: str, trail: list[tuple[str, str]]) -> None:
        if state.get(wid) == 2:
            return
        if state.get(wid) == 1:
            at = [t[0] for t in trail].index(wid)
            cycle = [t[0] for t in trail[at:]] + [wid]
            raise src.error(("workloads", ids.index(wid), trail[at][1]), "precedences form a cycle: "
                            + " -> ".join(cycle))
        state[wid] = 1
        for a, key in edges[wid]:
            visit(a, trail + [(wid, key)])
        state[wid] = 2

    for wid in ids:
        visit(wid, [])


def _check_quote_rules(spec: ProgramSpec, src: Source, catalog: Catalog) -> None:
    """A rule that names a bought quote acts on the program's purchases of it (`rules.lot_allowed`): forbid or
    require it, testing nothing else. An adjustment cannot name one — the quote's lots serve several workloads,
    and which run used which lot is not decided — and neither can a rule that also tests a run's size, days,
    power or cost."""
    for i, r in enumerate(spec.rules):
        named = quote_ids(r.when) or []
        bought = [q for q in named if q in catalog.quotes and catalog.quotes[q].mode == "buy"]
        if not bought:
            continue
        if not isinstance(r.then, str):
            raise src.error(("rules", i, "then"), f"an adjustment cannot name the bought quote '{bought[0]}' in a "
                            "program file (its lots serve several workloads): forbid or require it, or adjust by "
                            "system or accelerator")
        w = r.when
        if any(c is not None for c in (w.gpus, w.nodes, w.days, w.power_kw, w.cost)):
            raise src.error(("rules", i, "when"), f"a rule naming the bought quote '{bought[0]}' in a program file "
                            "can test only quotes and option attributes (not gpus, nodes, days, power_kw or cost)")


def _narrowed(program: Schedule, own: Schedule) -> dict[str, Any]:
    starts = [d for d in (program.earliest_start, own.earliest_start) if d is not None]
    ends = [d for d in (program.deadline, own.deadline) if d is not None]
    out: dict[str, Any] = {}
    if starts:
        out["earliest_start"] = max(starts)
    if ends:
        out["deadline"] = min(ends)
    return out


def _policy_of(program_raw: Mapping[str, Any], spec: ProgramSpec, w: ProgramWorkload) -> dict[str, Any]:
    """The program's policy narrowed by the workload's: modes intersected, include lists intersected (an empty
    program list means "any"), exclude lists joined."""
    pol = copy.deepcopy(dict(program_raw.get("policy") or {}))
    if w.policy.modes is not None:
        pol["modes"] = [m for m in spec.policy.modes if m in w.policy.modes]
    for key in ("accelerators", "vendors"):
        own: Selection | None = getattr(w.policy, key)
        if own is None:
            continue
        base: Selection = getattr(spec.policy, key)
        inc = [x for x in own.include if not base.include or x.lower() in {b.lower() for b in base.include}]
        if base.include and not own.include:
            inc = list(base.include)
        pol[key] = {"include": inc, "exclude": sorted(set(base.exclude) | set(own.exclude))}
    return pol


def _derived_data(raw: Mapping[str, Any], spec: ProgramSpec, i: int) -> dict[str, Any]:
    w = spec.workloads[i]
    item_raw = raw["workloads"][i]
    data = {k: copy.deepcopy(v) for k, v in raw.items() if k not in ("workloads", "objective")}
    data["workload"] = copy.deepcopy(item_raw["workload"])
    data["schedule"] = _narrowed(spec.schedule, w.schedule)
    data["policy"] = _policy_of(raw, spec, w)
    if isinstance(data.get("site"), dict):
        data["site"].pop("power_steps", None)
    data["budget"] = {}
    return data


def _derive(raw: Mapping[str, Any], spec: ProgramSpec, src: Source, seed: Problem, i: int,
            quote_changes: tuple[Change, ...]) -> Problem:
    w = spec.workloads[i]
    data = _derived_data(raw, spec, i)
    if data["policy"].get("modes") == []:
        raise src.error(("workloads", i, "policy", "modes"), "none of these modes is allowed by the program's policy")
    lines = {p[2:]: ln for p, ln in src.lines.items() if p[:2] == ("workloads", i) and len(p) > 2}
    lines.update({p: ln for p, ln in src.lines.items() if p and p[0] != "workloads"})
    sub = Source(src.file, data, lines, {})
    base = Problem(spec=None, catalog=None, assumptions=None, as_of=seed.as_of,  # type: ignore[arg-type]
                   as_of_defaulted=True, source=sub, quote_files=seed.quote_files, raw=data,
                   catalog_entries=seed.catalog_entries, files_catalog=seed.files_catalog)
    try:
        return _build(base, quote_changes, seed.files_catalog)
    except InputError as exc:
        raise combined([InputError(f"workload '{w.id}': {e.message}", file=e.file, line=e.line, path=e.path,
                                   origin=e.origin) for e in exc.each()]) from None


def single_run(pp: ProgramProblem) -> Problem | None:
    """A program of one workload that uses nothing a single run lacks (a quarterly cap, a power step) is a single
    run: that run's problem — the workload with the program's schedule, site, budget, policy, risk, rules and
    objective — so that it is planned, priced and explained by the same code and gives the same plan, byte for
    byte, as the same run written as a problem file. None for any other program."""
    spec = pp.spec
    if len(spec.workloads) != 1 or spec.budget.per_quarter_usd or (spec.site is not None and spec.site.power_steps):
        return None
    (_w, problem), = pp.workloads
    raw = pp.source.data
    data = dict(problem.raw)
    budget = {k: v for k, v in (raw.get("budget") or {}).items() if k != "per_quarter_usd"}
    if budget:
        data["budget"] = budget
    if "objective" in raw:
        data["objective"] = raw["objective"]
    lines = dict(problem.source.lines)
    lines.update({p: ln for p, ln in pp.source.lines.items() if p[:1] in (("budget",), ("objective",))})
    overridden = {p[2:] if p[:2] == ("workloads", 0) else p: o for p, o in pp.source.overridden.items()
                  if p[:2] == ("workloads", 0) or p[:1] != ("workloads",)}
    base = Problem(spec=None, catalog=None, assumptions=None, as_of=pp.as_of,  # type: ignore[arg-type]
                   as_of_defaulted=pp.spec.as_of is None, source=Source(pp.file, data, lines, overridden),
                   quote_files=problem.quote_files, raw=data, catalog_entries=problem.catalog_entries,
                   files_catalog=problem.files_catalog)
    return _build(base, tuple(c for c in pp.changes if c.quote is not None), problem.files_catalog)


def load_program(file: str, sets: Sequence[str] = (), *, quotes: Sequence[str] = (),
                 today: date | None = None) -> ProgramProblem:
    """Load and validate a program file (see module docstring); raises `InputError` on any problem."""
    src = load_file(file)
    if not is_program_data(src.data):
        raise src.error((), "not a program file (expected a `workloads:` list)")
    return build_program(src, parse_sets(sets), quotes=quotes, today=today or date.today())


def build_program(src: Source, changes: Sequence[Change], *, quotes: Sequence[str], today: date,
                  catalog: Catalog | None = None, entries: tuple[str, ...] = ()) -> ProgramProblem:
    """The validated program of `src` with `changes`. `catalog` (read from the files `entries` name) is reused
    when the program's `catalogs:` still name those files; otherwise they are read."""
    changes = tuple(_by_id(changes, src.data))
    data, replaced = apply_to_data(dict(src.data), [c for c in changes if c.quote is None])
    psrc = Source(src.file, data, src.lines, replaced)
    spec, found = validate_all(ProgramSpec, psrc)
    found = number_errors(psrc, data, ()) + found
    if spec is None or found:
        raise combined(found)
    _check_links(spec, psrc)
    as_of = spec.as_of or today
    # One ordinary problem (the first workload's) reads the catalogs; the others reuse what it read.
    quote_changes = tuple(c for c in changes if c.quote is not None)
    seed = Problem(spec=None, catalog=None, assumptions=None, as_of=as_of,  # type: ignore[arg-type]
                   as_of_defaulted=spec.as_of is None, source=psrc, quote_files=tuple(str(q) for q in quotes),
                   raw=data, files_catalog=catalog, catalog_entries=entries)
    derived = _derive_all(data, spec, psrc, seed, quote_changes)
    _check_calendar(spec, psrc, as_of)
    portable_catalog = catalog if catalog is not None and not entries and not quotes else None
    return ProgramProblem(spec, tuple(zip(spec.workloads, derived, strict=True)), as_of, psrc, changes, src,
                          tuple(str(q) for q in quotes), today, portable_catalog)


def _derive_all(data: Mapping[str, Any], spec: ProgramSpec, src: Source, seed: Problem,
                quote_changes: tuple[Change, ...]) -> list[Problem]:
    """Every workload's problem; the mistakes of all of them reported at once (a mistake of the catalog or of the
    program's shared sections, found in every workload, is reported once)."""
    derived: list[Problem] = []
    found: list[InputError] = []
    for i in range(len(spec.workloads)):
        try:   # the first workload's problem reads the catalogs; the others reuse what it read
            derived.append(_derive(data, spec, src, derived[0] if derived else seed, i, quote_changes))
        except InputError as exc:
            found.append(exc)
        if i == 0 and derived:
            _check_quote_rules(spec, src, derived[0].catalog)
            _check_program_work(derived[0], len(spec.workloads), src)
    if found:
        raise combined(found)
    return derived


@dataclass(frozen=True)
class PortableProgram:
    """A program as plain data, for work that runs in another process or on a Ray cluster (as
    `problem.PortableProblem`): the file's data without `catalogs:`, the user catalog files as text, the changes
    (index paths) and the planning date. `program()` rebuilds the same validated program without reading a file."""

    name: str
    data: Mapping[str, Any]
    quote_texts: tuple[tuple[str, str], ...]
    changes: tuple[Change, ...]
    today: date

    def program(self, more: Sequence[Change] = ()) -> ProgramProblem:
        return build_program(Source(self.name, dict(self.data)), self.changes + tuple(more), quotes=(),
                             today=self.today, catalog=catalog_of_texts(self.quote_texts))


def portable_program(pp: ProgramProblem) -> PortableProgram:
    """`pp` as plain data (see `PortableProgram`); its user catalog files are read again and must be unchanged."""
    first = pp.first
    texts = catalog_texts(first.catalog_entries + first.quote_files)
    if first.files_catalog is not None and pp.texts_catalog is None and \
            dict(catalog_of_texts(texts).quotes) != dict(first.files_catalog.quotes):
        raise InputError("the catalog files changed since they were read; run the command again", file=pp.file)
    assert pp.original is not None and pp.today is not None
    data = {k: v for k, v in pp.original.data.items() if k != "catalogs"}
    return PortableProgram(pp.file, data, texts, pp.changes, pp.today)


MAX_PROGRAM_POINTS = 1_000_000
"""Most (option, node count) estimates a program may ask for over all its workloads (each workload's estimates are
made over the same catalog and grid, and each is bounded by `problem.MAX_POINTS`): ~4 kB each while a workload's
candidates are taken from them, so a program's estimates stay near the memory of the largest single problems."""


def _check_program_work(first: Problem, workloads: int, src: Source) -> None:
    counts = len(first.assumptions.values.node_grid.counts())
    options = len({(q.system, q.mode) for q in first.catalog.quotes.values()})
    total = counts * options * workloads
    if total > MAX_PROGRAM_POINTS:
        raise src.error(("workloads",), f"{workloads} workloads x {counts:,} node counts x {options:,} catalog "
                        f"options = {total:,} estimates; at most {MAX_PROGRAM_POINTS:,} (use a coarser "
                        "risk.node_grid, fewer quotes or fewer workloads)")


def _check_calendar(spec: ProgramSpec, src: Source, as_of: date) -> None:
    """Dates a program counts in days must lie on a bounded calendar (see `MAX_HORIZON_DAYS`)."""
    dated: list[tuple[PathT, date]] = [(("schedule", k), getattr(spec.schedule, k))
                                       for k in ("earliest_start", "deadline") if getattr(spec.schedule, k)]
    for i, w in enumerate(spec.workloads):
        dated += [(("workloads", i, "schedule", k), getattr(w.schedule, k))
                  for k in ("earliest_start", "deadline") if getattr(w.schedule, k)]
    if spec.site is not None:
        dated += [(("site", "power_steps", i, "from"), s.from_) for i, s in enumerate(spec.site.power_steps)]
    for path, d in dated:
        if (d - as_of).days > MAX_HORIZON_DAYS:
            raise src.error(path, f"{d} is more than {MAX_HORIZON_DAYS} days after as_of {as_of}")
    for key in spec.budget.per_quarter_usd:
        first, _ = quarter_bounds(key)
        if (first - as_of).days > MAX_HORIZON_DAYS:
            raise src.error(("budget", "per_quarter_usd", key), f"quarter {key} starts more than "
                            f"{MAX_HORIZON_DAYS} days after as_of {as_of}")


__all__ = ["ProgramSpec", "ProgramWorkload", "ProgramProblem", "PortableProgram", "portable_program", "PowerStep",
           "load_program", "build_program", "is_program_data", "quarter_bounds", "quarter_of", "MAX_WORKLOADS",
           "MAX_HORIZON_DAYS"]
