"""CP-SAT, imported without pandas and numpy.

`ortools.sat.python.cp_model` (9.15) imports pandas (~0.35 s) and numpy (~0.12 s) — together over a third of
`plan solve`'s start-up — yet `plan` uses neither through it: pandas only backs the Series helpers
(`new_int_var_series` …), and numpy only appears as *types* — the numpy scalar classes in `isinstance` checks and
`Union` annotations (`np.int8` … `np.uint64`, `np.double`, `np.bool_`), which `plan`, passing plain Python ints and
bools, never needs to match. If neither library is loaded yet, cp_model sees stub modules with those names, which are
removed right after so that any later `import numpy` / `import pandas` gets the real library. Should a future
cp_model need more of either at import, the stubbed import fails and it is imported again with the real libraries.
Consequences in this process: cp_model's Series helpers are unusable, and numpy scalars passed to cp_model are not
recognised as numbers (plan passes none).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING

_NUMPY_TYPES = ("int8", "uint8", "int32", "uint32", "int64", "uint64", "double", "bool_")


def _stubs() -> dict[str, types.ModuleType]:
    out: dict[str, types.ModuleType] = {}
    if "pandas" not in sys.modules:
        pd = types.ModuleType("pandas")
        pd.Index = type("Index", (), {})  # type: ignore[attr-defined]
        pd.Series = type("Series", (), {})  # type: ignore[attr-defined]
        out["pandas"] = pd
    if "numpy" not in sys.modules:
        np = types.ModuleType("numpy")
        for name in _NUMPY_TYPES:
            setattr(np, name, type(name, (), {}))
        out["numpy"] = np
    return out


def _import_cp_model() -> types.ModuleType:
    if "ortools.sat.python.cp_model" in sys.modules:
        from ortools.sat.python import cp_model
        return cp_model
    stubs = _stubs()
    sys.modules.update(stubs)
    try:
        from ortools.sat.python import cp_model
        return cp_model
    except Exception:  # noqa: BLE001 - a cp_model that needs the real libraries at import: use them
        sys.modules.pop("ortools.sat.python.cp_model", None)
        for name, stub in stubs.items():
            if sys.modules.get(name) is stub:
                del sys.modules[name]
        from ortools.sat.python import cp_model
        return cp_model
    finally:
        for name, stub in stubs.items():
            if sys.modules.get(name) is stub:
                del sys.modules[name]


if TYPE_CHECKING:
    from ortools.sat.python import cp_model
else:
    cp_model = _import_cp_model()


class Model(cp_model.CpModel):
    """A CpModel without the deprecated CamelCase aliases ortools attaches to every instance (~7 ms each, and
    plan builds one model per accelerator/mode pair). Only snake_case methods are used here."""

    def _add_pre_pep8_methods(self) -> None:
        return None


def make_solver(limit: float, *, workers: int = 1, presolve: bool = True) -> cp_model.CpSolver:
    """A CP-SAT solver with this project's settings.

    Deterministic (seed 0, a deterministic-time limit, one worker unless asked), the ortools 9.15 wrong-optimum
    workaround (`presolve_inclusion_work_limit = 0`, google/or-tools#5293), and light presolve (no probing or
    symmetry: our models are small one-hot selections where those cost more than they save). `presolve=False` is
    for reading assumption cores, which can contain foreign literals with presolve on (google/or-tools#5141).
    """
    s = cp_model.CpSolver()
    p = s.parameters
    p.num_workers = workers
    p.random_seed = 0
    p.max_deterministic_time = limit
    p.presolve_inclusion_work_limit = 0
    p.cp_model_probing_level = 0
    p.symmetry_level = 0
    if not presolve:
        p.cp_model_presolve = False
        p.keep_all_feasible_solutions_in_presolve = True
    return s


__all__ = ["cp_model", "make_solver", "Model"]
