"""The exceptions `plan` raises on purpose, one per way a run can end without an answer.

The CLI maps each to an exit code (README, "Exit codes"): `InputError` 2, `Interrupted` 130, `InternalError` 4.
Anything else escaping the solver is a bug and is reported like an `InternalError`. Every message is one line:
it must say *where* (file and line, a `--set`, or a command-line option), the field path, and *what was expected*.
"""

from __future__ import annotations


class PlanError(Exception):
    """Base of every exception `plan` raises deliberately."""


class InputError(PlanError):
    """Bad input: where it came from, the field path, and what was expected.

    `origin` names where the value came from when it is not a file line: a `--set PATH=VALUE`, or a command-line
    option such as `--time-limit`. It takes precedence over `file`/`line`, because a value given with `--set`
    must not be blamed on the line of the file it replaced.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 path: str | None = None, origin: str | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.path = path
        self.origin = origin
        super().__init__(self.render())

    def render(self) -> str:
        if self.origin:
            where = f"{self.origin}: "
        elif self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        else:
            where = ""
        field = f"{self.path}: " if self.path and not (self.origin and self.path in self.origin) else ""
        return f"{where}{field}{self.message}"


class InternalError(PlanError):
    """A bug in `plan`, never the user's fault (exit code 4, "please report")."""


class PlanCheckError(InternalError, AssertionError):
    """The independent checker found a plan that violates a constraint or whose figures do not add up."""


class Interrupted(PlanError):
    """The user interrupted the run (Ctrl-C): no answer, partial or otherwise, may be reported."""
