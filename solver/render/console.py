"""How one command behaves as a process: exit codes, Ctrl-C, pipes, full disks, logging, progress, garbage collection.

- **Exit codes** (README): 0 a proven plan; 1 infeasible (the conflict is printed); 2 bad input (one line per
  mistake, every mistake of the input at once), usage, or a file or stream that cannot be read or written; 3 a time
  limit reached without a proof; 4 an internal error (a bug: one line, "please report", the traceback with
  `--debug`); 130 interrupted; 143 terminated (SIGTERM).
- **SIGTERM** (`kill`, a service manager, a batch scheduler) is handled as Ctrl-C is, with its own line and code:
  `on_sigterm` raises `Terminated` (a `KeyboardInterrupt`, so every path that stops a search or a pool on Ctrl-C
  stops it here too), and `stopped` reports whichever came: "plan: terminated (SIGTERM); no answer was written",
  exit 143 (128 + 15). Unlike Ctrl-C, which the terminal sends to the whole process group, SIGTERM usually
  reaches this process alone, so its workers are stopped by it, not by the signal (`answers/executors.py`,
  `solve/forked.py`): none outlives the command.
- **The answer is written once, whole.** A command renders its complete output into a buffer; it reaches stdout
  only when the command has finished, with SIGINT and SIGTERM held back during the write. Ctrl-C at any earlier
  moment leaves stdout empty ("interrupted" on stderr, exit 130): never a partial answer, and never the answer of an
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
from typing import Any

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
EXIT_TERMINATED = 128 + signal.SIGTERM
INTERRUPTED = "interrupted"
TERMINATED = "plan: terminated (SIGTERM); no answer was written"
TERMINATED_AFTER_ANSWER = "plan: terminated (SIGTERM) after the answer was written"
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
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if _main_thread() else None
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
_sigterms = 0
"""How many times `on_sigterm` has run in this process."""
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
"""The signals that stop a command: held back while the answer is written, and while workers are started."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises `KeyboardInterrupt`, so that it unwinds the same way: a search stops, a
    pool or forked searches are stopped, no partial answer is kept. It is a `KeyboardInterrupt` because code this
    package does not own treats only that one as an interruption: `ray.get` ends with a `KeyboardInterrupt` of its
    own for it, while any other exception a signal handler raises there is printed and dropped. Where it is turned
    into `Interrupted` (`engine.py`, `forked.py`), `stopped` still tells SIGTERM from Ctrl-C by the count
    `on_sigterm` keeps."""


def on_sigint(signum: int, frame: object) -> None:
    """The console script's SIGINT handler: `KeyboardInterrupt`, and a count of the signals.

    The count is why this is not `signal.default_int_handler`: a `KeyboardInterrupt` raised while an extension
    module initialises (numpy's, under a lazy import of CP-SAT) reaches `run` as an `ImportError`
    ("initialization failed"), which must be reported as the interruption it is, not as an internal error."""
    global _sigints
    _sigints += 1
    raise KeyboardInterrupt


def on_sigterm(signum: int, frame: object) -> None:
    """The console script's SIGTERM handler: `Terminated`, and a count of the signals (see `on_sigint`)."""
    global _sigterms
    _sigterms += 1
    raise Terminated


def quiet_unraisable(hook: Callable[[Any], object]) -> Callable[[Any], object]:
    """`sys.unraisablehook` that drops a Ctrl-C or SIGTERM raised where Python cannot raise it (a weakref callback
    of the import system, a finaliser): Python would print "Exception ignored in …" and a traceback, though the
    signal is counted (`on_sigint`) and the command still ends with its quiet exit 130 or 143 (`run`). Anything
    else goes to `hook`."""
    def unraisable(u: Any) -> object:
        if isinstance(u.exc_value, KeyboardInterrupt):
            return None
        return hook(u)
    return unraisable


def signals() -> tuple[int, int]:
    """How many Ctrl-Cs and SIGTERMs this process has taken so far (to tell, later, whether one came since)."""
    return _sigints, _sigterms


def stopped(before: tuple[int, int] = (0, 0), *, answered: bool = False) -> int:
    """Report that the command was stopped by a signal: one line on stderr, and the exit code (143 if SIGTERM came
    since `before`, else 130). SIGTERM wins over Ctrl-C: it is the one that means the process must end now."""
    if _sigterms > before[1]:
        _stderr(TERMINATED_AFTER_ANSWER if answered else TERMINATED)
        return EXIT_TERMINATED
    _stderr(INTERRUPTED)
    return EXIT_INTERRUPTED


def run(body: Callable[[Output], int], *, verbose: bool = False, debug: bool = False, progress: bool = True,
        process_ends: bool = False) -> int:
    """Run one command body and return its exit code (see module docstring); it never raises but SystemExit.

    `process_ends`: the console script leaves with `os._exit` right after the command, so collection is not turned
    back on — that would only start a collection, a scan of every object the command made, of objects about to
    vanish with the process (measured: bench/README.md, "Timings that used to live in docstrings (moved
    2026-12-07)"). In-process callers (tests, a notebook) get the collector back as they had it."""
    out = Output()
    handler = _configure_logging(verbose, debug)
    spinner = Spinner() if progress and not verbose and not debug else None
    if spinner is not None:
        logging.getLogger("solver").addHandler(spinner)
    if process_ends:
        gc.disable()
    before = signals()
    try:
        with collect.paused():
            if spinner is not None:
                with spinner:
                    code = body(out)
            else:
                code = body(out)
    except (Interrupted, KeyboardInterrupt):
        return stopped(before)
    except InputError as exc:
        for line in exc.lines():   # one line per mistake (`InputErrors`: every mistake of the input, in file order)
            _stderr(f"error: {line}")
        return EXIT_INPUT
    except RecursionError:
        _stderr("error: input is nested too deeply")
        return EXIT_INPUT
    except InternalError as exc:
        if signals()[1] > before[1]:  # a worker the same SIGTERM ended, seen dead before the signal was handled here
            return stopped(before)
        _stderr(f"INTERNAL ERROR (please report): {exc}")
        if debug:
            _stderr(traceback.format_exc())
        return EXIT_INTERNAL
    except MemoryError:
        _stderr("error: out of memory (the problem is too large for this machine; see the README's limits)")
        return EXIT_INTERNAL
    except Exception as exc:  # a bug: one line, never the "infeasible" code
        if signals() != before:  # a side effect of Ctrl-C or SIGTERM (see `on_sigint`)
            return stopped(before)
        _stderr(f"INTERNAL ERROR (please report; --debug shows the traceback): {type(exc).__name__}: {exc}")
        if debug:
            _stderr(traceback.format_exc())
        return EXIT_INTERNAL
    finally:
        if spinner is not None:
            logging.getLogger("solver").removeHandler(spinner)
        logging.getLogger("solver").removeHandler(handler)
    if signals() != before:
        # The signal's exception was raised where Python drops it (a finaliser, `__del__` of a pool's connection:
        # "Exception ignored in …") and the command went on to the end: it was still stopped before its answer.
        return stopped(before)
    try:
        failed = _write_stdout("".join(out.parts))
    except KeyboardInterrupt:  # held back during the write: the answer is whole, or nothing was written
        return stopped(before, answered=bool(out.parts))
    if failed >= 0:
        return failed
    for note in out.notes:
        _stderr(note)
    return code
