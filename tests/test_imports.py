"""`solver/model/cpsat.py` imports CP-SAT without pandas (start-up time); check that this is safe.

Run in fresh interpreters, since the test process may already have pandas loaded (then the stub is not used).
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
{pre}
from solver.model.cpsat import Model, cp_model
from solver.solve.engine import Engine, Limits
stubbed = "pandas" not in sys.modules
m = Model()
x = m.new_int_var(0, 10, "x")
b = m.new_bool_var("b")
m.add(x >= 3).only_enforce_if(b)
m.add_bool_or([b])
m.add(x <= 7)
m.minimize(2 * x + 1)
out = Engine(Limits(5.0)).solve(m, label='import-check')
assert out.status == 'optimal' and out.value(x) == 3
import pandas  # the real library is importable afterwards
assert hasattr(pandas, "DataFrame")
print("stubbed" if stubbed else "real")
"""


def _run(pre: str) -> str:
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(pre=pre)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_cp_sat_imports_without_pandas_and_still_solves() -> None:
    assert _run("") == "stubbed"


def test_cp_sat_with_pandas_already_loaded_uses_the_real_library() -> None:
    assert _run("import pandas") == "real"
