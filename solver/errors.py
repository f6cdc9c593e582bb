"""The exceptions `plan` raises on purpose, one per way a run can end without an answer.

The CLI maps each to an exit code (README, "Exit codes"): `InputError` 2, `Interrupted` 130, `InternalError` 4.
Anything else escaping the solver is a bug and is reported like an `InternalError`. Every message is one line:
it must say *where* (file and line, a `--set`, or a command-line option), the field path, and *what was expected*.
Several mistakes found in one reading of the input are one `InputErrors`: an `InputError` (the first mistake's) that
carries one such line per mistake, in file order (`combined`), as a linter reports them.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_SHOWN = 20
"""Most mistakes listed at once; the rest are counted ("… and N more")."""


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

    def lines(self) -> list[str]:
        """The lines the console prints, one per mistake (`InputErrors` has several)."""
        return [self.render()]

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled with its parts, not only its text: an error raised in a worker keeps its file, line and path."""
        return (_input_error, (self.message, self.file, self.line, self.path, self.origin))

    def each(self) -> tuple["InputError", ...]:
        """The single mistakes this error reports."""
        return (self,)


class InputErrors(InputError):
    """Several mistakes in the input, reported together: one line each (`InputError.render`), in file order, at
    most `MAX_SHOWN` then a count. Its own `message`, `file`, `line`, `path` and `origin` are the first mistake's,
    so code that reads one error still reads the first. Build it with `combined`, which gives a plain `InputError`
    for a single mistake."""

    def __init__(self, errors: Sequence[InputError]) -> None:
        self.errors = tuple(errors)
        first = self.errors[0]
        super().__init__(first.message, file=first.file, line=first.line, path=first.path, origin=first.origin)

    def render(self) -> str:
        return "\n".join(self.lines())

    def lines(self) -> list[str]:
        shown = [e.render() for e in self.errors[:MAX_SHOWN]]
        rest = len(self.errors) - MAX_SHOWN
        return shown + ([f"… and {rest} more mistake{'s' if rest > 1 else ''} (fix these and run again)"]
                        if rest > 0 else [])

    def each(self) -> tuple[InputError, ...]:
        return self.errors

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled with its mistakes (an error raised in a worker process reaches the parent whole)."""
        return (InputErrors, (list(self.errors),))


def combined(errors: Sequence[InputError]) -> InputError:
    """One error for these mistakes (nested `InputErrors` flattened): the mistake itself when there is one, else an
    `InputErrors`, one mistake per place and field (the first found there wins: a later one at the same place is
    usually its consequence), in file order — a file's mistakes by line, files in the order their first mistake was
    found, then mistakes given on the command line (`--set …`) in the order found."""
    flat = [one for e in errors for one in e.each()]
    if not flat:
        raise ValueError("combined() needs at least one error")
    seen: set[object] = set()
    kept: list[InputError] = []
    for e in flat:
        key = (e.origin or e.file, None if e.origin else e.line, e.path)
        if key not in seen and e.render() not in seen:
            seen.update((key, e.render()))
            kept.append(e)
    if len(kept) == 1:
        return kept[0]
    files: dict[str, int] = {}
    for e in kept:
        if not e.origin and e.file is not None:
            files.setdefault(e.file, len(files))

    def order(item: tuple[int, InputError]) -> tuple[int, int, int, int]:
        k, e = item
        if e.origin or e.file is None:
            return (1, 0, 0, k)
        return (0, files[e.file], e.line or 0, k)

    return InputErrors([e for _, e in sorted(enumerate(kept), key=order)])


def _input_error(message: str, file: str | None, line: int | None, path: str | None,
                 origin: str | None) -> InputError:
    return InputError(message, file=file, line=line, path=path, origin=origin)


class InternalError(PlanError):
    """A bug in `plan`, never the user's fault (exit code 4, "please report")."""


class PlanCheckError(InternalError, AssertionError):
    """The independent checker found a plan that violates a constraint or whose figures do not add up."""


class Interrupted(PlanError):
    """The user interrupted the run (Ctrl-C): no answer, partial or otherwise, may be reported."""
