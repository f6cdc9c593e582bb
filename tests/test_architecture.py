"""The shape the codebase promises (solver/__init__.py): stages that import one way, no import cycles, small
functions, one immutable `Problem` that what-ifs copy, and estimates that later stages do not write to."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from solver.answers.report import solve_and_explain
from solver.inputs.problem import load_problem

ROOT = Path(__file__).resolve().parent.parent
SOLVER = ROOT / "solver"
STAGES = ("inputs", "estimate", "model", "solve", "answers", "render", "cli")
SHARED = {"solver", "solver.errors", "solver.collect", "solver.bisection"}
MAX_FUNCTION_LINES = 80


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every solver module a file imports, at any depth of the file (function-level imports included)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "solver"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "solver":
                continue
            out.add(mod)
            for a in node.names:  # `from . import bundled` names a module
                if (SOLVER.parent / (mod.replace(".", "/") + f"/{a.name}.py")).exists():
                    out.add(f"{mod}.{a.name}")
    return out


def _stage(module: str) -> int | None:
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else None


MODULES = {_module_name(p): _imports(p) for p in sorted(SOLVER.rglob("*.py"))}


def test_every_module_is_in_a_stage_or_shared() -> None:
    for module in MODULES:
        assert module in SHARED or _stage(module) is not None, module


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_flow_one_way(module: str) -> None:
    """inputs -> estimate -> model -> solve -> answers -> render -> cli: nothing imports a later stage; the shared
    modules (errors, collect, bisection) import no stage at all."""
    here = _stage(module)
    for target in MODULES[module]:
        there = _stage(target)
        if module in SHARED:
            assert there is None, f"{module} (shared) imports the stage module {target}"
        elif there is not None:
            assert there <= here, f"{module} ({STAGES[here]}) imports {target} ({STAGES[there]}), a later stage"


def test_no_import_cycles() -> None:
    graph = {m: {t for t in deps if t in MODULES and t != m} for m, deps in MODULES.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    # a package's __init__ imported by its own modules is not a cycle of code; there are none here anyway
    assert cycles == [], cycles


def test_functions_are_small() -> None:
    long = []
    for path in sorted(SOLVER.rglob("*.py")) + [ROOT / "cli.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    assert long == []


MAX_MODULE_LINES = 700
"""A module a reader can hold in mind; past this, split along a seam (a constraint family, a kind of proof)."""


def test_modules_are_small() -> None:
    long = [f"{p.relative_to(ROOT)} ({n} lines)" for p in sorted(SOLVER.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES]
    assert long == []


def test_a_class_name_has_one_meaning() -> None:
    """No two public classes of `solver/` share a name: `Lines` of cost and `Lines` of a file's line numbers, or a
    protocol named as the class it describes, made a reader look up which one a signature meant."""
    where: dict[str, list[str]] = {}
    for path in sorted(SOLVER.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(_module_name(path))
    assert {name: mods for name, mods in where.items() if len(mods) > 1} == {}


def test_what_ifs_copy_the_problem_and_never_change_it() -> None:
    problem = load_problem(ROOT / "constraints" / "datacenter.yaml")
    quote = "lambda-b200-8x-ondemand"
    before = problem.catalog.quotes[quote]
    cheaper = problem.with_quote(quote, {"usd_per_gpu_hour": 1.0})
    later = problem.with_sets(["schedule.deadline=2028-01-01"])
    assert problem.catalog.quotes[quote] is before and before.usd_per_gpu_hour != 1.0
    assert cheaper.catalog.quotes[quote].usd_per_gpu_hour == 1.0
    assert cheaper.catalog.quotes["coreweave-b200-8x-ondemand"] is problem.catalog.quotes["coreweave-b200-8x-ondemand"]
    assert str(problem.spec.schedule.deadline) == "2027-10-01" and str(later.spec.schedule.deadline) == "2028-01-01"
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.spec_ = None  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        problem.catalog.quotes[quote] = before  # type: ignore[index]


def test_later_stages_do_not_write_onto_estimates() -> None:
    """After a solve with its explanations, every option and point holds exactly its own fields (a point also its
    own lazily computed `fixed` lines): screening, bounds and ceilings live in the model stage's structures."""
    problem = load_problem(ROOT / "tests" / "infeasible" / "budget_and_deadline.yaml")
    ctx, _result = solve_and_explain(problem)
    option_fields = {f.name for f in dataclasses.fields(ctx.universe.options[0])}
    point_fields = {f.name for f in dataclasses.fields(ctx.universe.options[0].points[0])} | {"fixed"}
    for o in ctx.universe.options:
        assert set(vars(o)) == option_fields, set(vars(o)) - option_fields
        for pt in o.points:
            assert set(vars(pt)) <= point_fields, set(vars(pt)) - point_fields


def test_a_solved_universe_is_freed_by_reference_counting() -> None:
    """No reference cycle holds a universe (points refer to their option weakly; the closures that price a point
    keep what they read of the option, not the option): once the context of a solve is dropped, its options and
    points are gone with the cyclic collector off. A sweep of hundreds of what-ifs in one process depends on it —
    otherwise each leaves ~400,000 objects for the collector to find."""
    import gc
    import weakref

    from solver.solve.pipeline import prepare, solve_problem
    problem = load_problem(ROOT / "constraints" / "datacenter.yaml")
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        ctx = prepare(problem)
        solve_problem(problem, ctx=ctx)
        option = ctx.universe.options[0]
        probes = [weakref.ref(option), weakref.ref(option.points[0]), weakref.ref(option.points[-1]),
                  weakref.ref(ctx.universe)]
        assert option.points[0].option is option
        del ctx, option
        assert [p() is None for p in probes] == [True] * len(probes)
    finally:
        if was:
            gc.enable()
