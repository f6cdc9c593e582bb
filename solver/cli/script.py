"""The `plan` console script (`[project.scripts]` in pyproject.toml; `python cli.py` in a checkout)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from .commands import main
from .options import STATE


def entry() -> None:
    """The `plan` console script: run the command, flush, and leave without tearing the interpreter down.

    A solve leaves hundreds of thousands of small objects (points, cost lines) alive at exit; freeing them one by one
    at interpreter shutdown took ~0.13 s of `plan solve constraints/datacenter.yaml`'s ~1.1 s (bench/startup.py).
    Commands write their output before they return (`console.run`), so after flushing the two standard streams
    nothing is lost by `os._exit`. Usage errors, Ctrl-C and SIGTERM outside a command are handled here with the
    same codes.
    """
    from solver.render.console import on_sigint, on_sigterm, quiet_unraisable, stopped
    signal.signal(signal.SIGINT, on_sigint)  # from here on Ctrl-C is KeyboardInterrupt (console.py)
    signal.signal(signal.SIGTERM, on_sigterm)  # and SIGTERM its subclass Terminated, unwound the same way
    sys.unraisablehook = quiet_unraisable(sys.unraisablehook)
    STATE.console_script = True
    try:
        main.main(standalone_mode=False)
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    except (click.exceptions.Abort, KeyboardInterrupt):
        code = stopped()
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code or 0)

