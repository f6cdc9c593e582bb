"""The first lines `plan` runs, before any dependency is imported (this module imports only the standard library).

Run as the console script (`plan`) or from a checkout (`python cli.py`), Ctrl-C and SIGTERM while Python is still
importing get the same quiet exits as during a command (130, 143), and an interpreter that lacks the dependencies
gets one line saying how to install them (exit 2) instead of a traceback. Imported as a library (tests, benches)
nothing is changed. `solver/cli/__init__.py` imports this module first.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C before a command runs (while Python imports): the same quiet exit 130 as during one."""
    os.write(2, b"interrupted\n")
    os._exit(130)


def _terminated_while_starting(signum: int, frame: object) -> None:
    """SIGTERM before a command runs: no worker exists yet, so the line and exit 143 of one terminated during a
    command (`console.stopped`; spelled out here because importing the package is what is still under way)."""
    os.write(2, b"plan: terminated (SIGTERM); no answer was written\n")
    os._exit(143)


REQUIRED = ("ortools", "pydantic", "yaml", "click", "tabulate", "numpy")
"""The modules of pyproject.toml's dependencies (`yaml` is pyyaml's)."""
EXIT_NOT_INSTALLED = 2


def missing_dependencies(names: tuple[str, ...] = REQUIRED) -> list[str]:
    """The required modules Python cannot find, looked up without importing them (a few ms at start-up)."""
    import importlib.util
    missing = []
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def _check_installed() -> None:
    """`python3 cli.py ...` with an interpreter that lacks the dependencies: say how to install them (one line,
    exit 2) instead of a traceback or an "internal error"."""
    missing = missing_dependencies()
    if missing:
        os.write(2, (f"error: plan's dependencies are not installed for {sys.executable} (missing: "
                     f"{', '.join(missing)}); install the project first, as the README's first line does: "
                     "python3 -m venv .venv && . .venv/bin/activate && pip install -e .\n").encode())
        os._exit(EXIT_NOT_INSTALLED)


if os.path.basename(sys.argv[0]) in ("plan", "cli.py"):  # the console script, not a library or test import
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    signal.signal(signal.SIGTERM, _terminated_while_starting)
    _check_installed()
