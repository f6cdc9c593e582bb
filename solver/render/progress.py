"""Progress on stderr for commands that take more than a second: a spinner with the elapsed time and the latest
step the solver logged, on a terminal only (never in a pipe, a file or a test), erased when the command ends.

The solver reports its steps through `logging` at INFO ("estimated 46 options", "pair b200/cloud: optimal");
this handler shows the latest one in place instead of printing them, so stdout stays the answer alone.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import TextIO

_drawing = threading.Lock()
"""Held while the spinner writes, and by a fork (`os.register_at_fork`): a child forked mid-write would inherit the
stream's buffer lock held by a thread it does not have, and hang the first time it writes or flushes."""
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_drawing.acquire, after_in_parent=_drawing.release,
                        after_in_child=_drawing.release)

DELAY_SECONDS = 1.0
"""Nothing is shown for a command that finishes within this time."""
FRAME_SECONDS = 0.1
FRAMES = "|/-\\"


class Spinner(logging.Handler):
    """A logging handler that keeps the latest message and redraws one status line on a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(logging.INFO)
        self.stream = stream or sys.stderr
        self.message = "starting"
        self.start = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    def emit(self, record: logging.LogRecord) -> None:
        self.message = record.getMessage()

    def __enter__(self) -> "Spinner":
        if self.stream.isatty():
            self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        if self._stop.wait(DELAY_SECONDS):
            return
        k = 0
        while not self._stop.is_set():
            line = f"{FRAMES[k % len(FRAMES)]} {time.monotonic() - self.start:5.1f} s  {self.message}"[:100]
            try:
                with _drawing:
                    self.stream.write("\r\x1b[2K" + line)
                    self.stream.flush()
            except (OSError, ValueError):
                return
            self._shown = True
            k += 1
            self._stop.wait(FRAME_SECONDS)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            try:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
