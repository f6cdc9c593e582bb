"""How one command behaves as a process: exit codes, Ctrl-C, pipes, full disks, logging, progress, garbage collection.

- **Exit codes** (README): 0 a proven plan; 1 infeasible (the conflict is printed); 2 bad input, usage, or a file
  or stream that cannot be read or written; 3 a time limit reached without a proof; 4 an internal error (a bug:
  one line, "please report", the traceback with `--debug`); 130 interrupted.
- **The answer is written once, whole.** A command renders its complete output into a buffer; it reaches stdout
  only when the command has finished, with SIGINT held back during the write. Ctrl-C at any earlier moment
  leaves stdout empty ("interrupted" on stderr, exit 130): never a partial answer, and never the answer of an
  interrupted search (`solve/engine.py`).
- **Pipes and disks.** A reader that goes away (`| head`) ends the command quietly with exit 0; a full disk or a
  closed stdout is one line and exit 2, not a traceback.
- **Logging** goes to stderr: warnings by default, the solver's steps with `--verbose`, everything with `--debug`.
  On a terminal, the steps show as one progress line (`progress.py`).
- **Garbage collection** is paused while the command runs and restored after (`solver/collect.py`), except in
  the console script, which exits right after the command (see `run`).
"""

from __future__ import annotations

import errno
import gc
import logging
import os
import signal
import sys
import traceback
from collections.abc import Callable

from .. import collect
from ..errors import InputError, InternalError, Interrupted
from .progress import Spinner
from .safe import clean

EXIT_OK = 0
EXIT_INFEASIBLE = 1
EXIT_INPUT = 2
EXIT_LIMIT = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130
STATUS_EXIT = {"optimal": EXIT_OK, "infeasible": EXIT_INFEASIBLE, "feasible": EXIT_LIMIT, "unknown": EXIT_LIMIT}
"""Exit code of a solve by its status."""


class Output:
    """What a command prints: stdout text (written at the end, whole) and stderr notes (written after it)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.notes: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def note(self, text: str) -> None:
        self.notes.append(text)


def _stderr(text: str) -> None:
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(clean(text) + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def _configure_logging(verbose: bool, debug: bool) -> logging.Handler:
    logger = logging.getLogger("solver")
    logger.setLevel(logging.DEBUG if debug else logging.INFO)
    handler: logging.Handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.DEBUG if debug else logging.INFO if verbose else logging.WARNING)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.handlers = [h for h in logger.handlers if not getattr(h, "_plan_console", False)]
    handler._plan_console = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    return handler


def _write_stdout(text: str) -> int:
    """Write the answer; the exit code to use if that fails (0 for a closed pipe, 2 for a closed or full stream)."""
    if not text:
        return EXIT_OK
    stream = sys.stdout
    if stream is None:
        _stderr("error: cannot write the answer: standard output is closed")
        return EXIT_INPUT
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if _main_thread() else None
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except OSError as exc:
        _silence_stdout()
        reason = "disk full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        _stderr(f"error: cannot write the answer to standard output: {reason}")
        return EXIT_INPUT
    except ValueError:  # stdout closed by the caller of a library run
        _stderr("error: cannot write the answer: standard output is closed")
        return EXIT_INPUT
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return -1


def _main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


def _silence_stdout() -> None:
    """After a failed write, point stdout at /dev/null so the interpreter's own final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


_sigints = 0
"""How many times `on_sigint` has run in this process."""


def on_sigint(signum: int, frame: object) -> None:
    """The console script's SIGINT handler: `KeyboardInterrupt`, and a count of the signals.

    The count is why this is not `signal.default_int_handler`: a `KeyboardInterrupt` raised while an extension
    module initialises (numpy's, under a lazy import of CP-SAT) reaches `run` as an `ImportError`
    ("initialization failed"), which must be reported as the interruption it is, not as an internal error."""
    global _sigints
    _sigints += 1
    raise KeyboardInterrupt


def run(body: Callable[[Output], int], *, verbose: bool = False, debug: bool = False, progress: bool = True,
        process_ends: bool = False) -> int:
    """Run one command body and return its exit code (see module docstring); it never raises but SystemExit.

    `process_ends`: the console script leaves with `os._exit` right after the command, so collection is not turned
    back on — that would only start a collection (~0.15 s on the datacenter example) of objects about to vanish with
    the process. In-process callers (tests, a notebook) get the collector back as they had it."""
    out = Output()
    handler = _configure_logging(verbose, debug)
    spinner = Spinner() if progress and not verbose and not debug else None
    if spinner is not None:
        logging.getLogger("solver").addHandler(spinner)
    if process_ends:
        gc.disable()
    sigints_before = _sigints
    try:
        with collect.paused():
            if spinner is not None:
                with spinner:
                    code = body(out)
            else:
                code = body(out)
    except (Interrupted, KeyboardInterrupt):
        _stderr("interrupted")
        return EXIT_INTERRUPTED
    except InputError as exc:
        _stderr(f"error: {exc}")
        return EXIT_INPUT
    except RecursionError:
        _stderr("error: input is nested too deeply")
        return EXIT_INPUT
    except InternalError as exc:
        _stderr(f"INTERNAL ERROR (please report): {exc}")
        if debug:
            _stderr(traceback.format_exc())
        return EXIT_INTERNAL
    except MemoryError:
        _stderr("error: out of memory (the problem is too large for this machine; see the README's limits)")
        return EXIT_INTERNAL
    except Exception as exc:  # a bug: one line, never the "infeasible" code
        if _sigints > sigints_before:  # a side effect of Ctrl-C (see `on_sigint`)
            _stderr("interrupted")
            return EXIT_INTERRUPTED
        _stderr(f"INTERNAL ERROR (please report; --debug shows the traceback): {type(exc).__name__}: {exc}")
        if debug:
            _stderr(traceback.format_exc())
        return EXIT_INTERNAL
    finally:
        if spinner is not None:
            logging.getLogger("solver").removeHandler(spinner)
        logging.getLogger("solver").removeHandler(handler)
    try:
        failed = _write_stdout("".join(out.parts))
    except KeyboardInterrupt:
        _stderr("interrupted")
        return EXIT_INTERRUPTED
    if failed >= 0:
        return failed
    for note in out.notes:
        _stderr(note)
    return code
