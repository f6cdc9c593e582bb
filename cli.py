"""Run `plan` from a checkout without installing it: `python cli.py solve constraints/datacenter.yaml`.

The command line is the package's `solver/cli/` (installed as the `plan` console script, `solver.cli:entry`). This
file only re-exports it, so that `python cli.py …` and `from cli import main` work in a checkout; it is not
installed (the wheel holds one top-level package, `solver`). Importing `solver.cli` runs `solver/cli/start.py`
first: Ctrl-C, SIGTERM and the dependency check, before any dependency is imported.
"""

from __future__ import annotations

from solver.cli import entry, main

__all__ = ["entry", "main"]

if __name__ == "__main__":
    entry()
