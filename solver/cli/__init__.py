"""`plan`: the command line. Thin by design: parse the options, call the solver, render, return the exit code.

Process behaviour (exit codes, Ctrl-C, pipes, logging, progress) is `solver/render/console.py`; every command
body here only loads, calls and renders. Exit codes: 0 a proven plan; 1 infeasible; 2 bad input, usage or an
unwritable output; 3 a time limit reached without a proof; 4 internal error; 130 interrupted; 143 terminated.
Shell completion (click): `eval "$(_PLAN_COMPLETE=bash_source plan)"` (zsh: zsh_source, fish: fish_source).

The last stage (tests/test_architecture.py): it imports every other stage, none imports it. `start.py` runs first
(signals and the dependency check, before click is imported); `options.py` holds what the commands share;
`commands.py` the group and the commands about one file or the catalog; `whatif.py` the what-ifs and the report;
`programs.py` the program-file side of each; `init.py` `plan init`; `script.py` the console script, `entry`.
The console script is `solver.cli:entry`; `cli.py` at the top of a checkout re-exports `main` and `entry`.
"""

from __future__ import annotations

from .start import missing_dependencies  # first: Ctrl-C, SIGTERM and the dependency check before any import

from . import init, whatif  # noqa: E402,F401  (they add their commands to the group)
from .commands import main  # noqa: E402
from .script import entry  # noqa: E402

__all__ = ["entry", "main", "missing_dependencies"]
