"""CP-SAT, imported without pandas.

`ortools.sat.python.cp_model` imports pandas, a large import on every `plan solve`'s start-up (measured:
bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"), only for its pandas-Series
helpers (`new_int_var_series` …), which `plan` never uses; module import merely evaluates
`pd.Index`/`pd.Series` in type annotations. (numpy cannot be spared the same way: cp_model only names numpy
types, but its C++ helper imports numpy when the first model is created.) If pandas is not loaded yet we let
cp_model see a stub with those two names, then remove the stub so any later `import pandas` gets the real library.
cp_model's Series helpers are unusable in this process as a consequence; the rest of CP-SAT is untouched.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING


def _import_cp_model() -> types.ModuleType:
    if "ortools.sat.python.cp_model" in sys.modules or "pandas" in sys.modules:
        from ortools.sat.python import cp_model
        return cp_model
    stub = types.ModuleType("pandas")
    stub.Index = type("Index", (), {})  # type: ignore[attr-defined]
    stub.Series = type("Series", (), {})  # type: ignore[attr-defined]
    sys.modules["pandas"] = stub
    try:
        from ortools.sat.python import cp_model
    finally:
        if sys.modules.get("pandas") is stub:
            del sys.modules["pandas"]
    return cp_model


if TYPE_CHECKING:
    from ortools.sat.python import cp_model
else:
    cp_model = _import_cp_model()


class Model(cp_model.CpModel):
    """A CpModel without the deprecated CamelCase aliases ortools attaches to every instance (a bound method per
    alias, made for every model, and plan builds one model per accelerator/mode pair; measured: bench/README.md,
    "Timings that used to live in docstrings (moved 2026-12-07)"). Only snake_case methods are used here."""

    def _add_pre_pep8_methods(self) -> None:
        return None

    def clone(self) -> "Model":
        """A copy as a `Model`: ortools' own `clone` makes a plain CpModel, whose aliases are bound methods of the
        instance — a reference cycle. With collection paused for the command (`solver/collect.py`) every clone
        then stayed in memory with its proto: an infeasible program's explanation, ~200 clones, peaked at 791 MB
        where 261 MB sufficed."""
        out = Model()
        out.proto.copy_from(self.proto)
        out.rebuild_constant_map()
        return out


__all__ = ["cp_model", "Model"]
