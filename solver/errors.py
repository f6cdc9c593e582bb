"""One exception type for everything the user got wrong.

The CLI turns an `InputError` into a single line on stderr and exit code 2, never a traceback,
so every message must say *where* (file, line, field path) and *what was expected*.
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input: a file, a field path, an optional line, and what was expected."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 path: str | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.path = path
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        field = f"{self.path}: " if self.path else ""
        return f"{where}{field}{self.message}"


class PlanCheckError(AssertionError):
    """The independent checker found a plan that violates a constraint: a bug, never user error."""
