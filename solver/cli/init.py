"""`plan init [EXAMPLE]`: start a problem file of your own from a bundled example (`constraints/*.yaml` in the
repository, package data of the installed package). The examples name no other file, so the copy solves as it is,
from any folder, against the bundled catalogs."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import click

from .commands import main
from .options import common, process

DEFAULT_EXAMPLE = "datacenter"


@main.command()
@click.argument("example", required=False, default=None, metavar="[EXAMPLE]")
@click.option("-o", "--output", "output", default=None, metavar="PATH",
              help="The file to write, or a folder to write EXAMPLE.yaml into [default: EXAMPLE.yaml in the current "
                   "folder].")
@click.option("--force", is_flag=True, help="Replace the file if it exists.")
@click.option("--list", "list_", is_flag=True, help="List the bundled examples and what each is.")
@common
@process
def init(example: str | None, output: str | None, force: bool, list_: bool, out: Any, verbose: bool) -> int:
    """Write a bundled example problem to start from (default: datacenter, the 200B run from scratch): EXAMPLE.yaml
    here, or -o PATH. `plan init --list` lists them; then `plan solve EXAMPLE.yaml`."""
    from solver.inputs.bundled import example_summary, examples

    found = examples()
    if list_:
        out.write(_listing({name: example_summary(node.read_text(encoding="utf-8")) for name, node in found.items()}))
        return 0
    name = _example_name(example or DEFAULT_EXAMPLE, list(found))
    target = _target(name, output, force)
    from solver.render.files import write_atomic
    from solver.render.safe import clean
    write_atomic(str(target), found[name].read_text(encoding="utf-8"), "--output" if output else "plan init")
    out.write(clean(f"wrote {target} (the bundled example '{name}'); next: plan solve {_shell_word(str(target))}\n"))
    return 0


def _example_name(given: str, known: list[str]) -> str:
    """The example's name (`datacenter`, or `datacenter.yaml` as the file is called), or one line naming the
    closest ones."""
    from solver.errors import InputError
    from solver.inputs.names import did_you_mean
    name = given[: -len(".yaml")] if given.endswith(".yaml") else given
    if name not in known:
        hint = did_you_mean(name, known) or f"; the examples: {', '.join(known)}"
        raise InputError(f"unknown example '{given}'{hint} (plan init --list describes them)", origin="plan init")
    return name


def _target(name: str, output: str | None, force: bool) -> Path:
    """Where to write: `-o PATH` (a file, or a folder to put NAME.yaml in), else NAME.yaml here; an existing file
    only with --force."""
    from solver.errors import InputError
    target = Path(output) if output else Path(f"{name}.yaml")
    if output and target.is_dir():
        target = target / f"{name}.yaml"
    if (target.exists() or target.is_symlink()) and not force:
        raise InputError("exists already; plan init --force replaces it", file=str(target))
    return target


def _listing(summaries: dict[str, str]) -> str:
    """One entry per example: its name, then what it is, wrapped to the terminal."""
    width = max(60, min(shutil.get_terminal_size().columns, 120))
    pad = max(len(n) for n in summaries) + 2
    lines = []
    for name, summary in summaries.items():
        body = textwrap.wrap(summary, width - pad) or [""]
        lines.append(name.ljust(pad) + body[0])
        lines += [" " * pad + rest for rest in body[1:]]
    lines.append(f"\nplan init NAME writes NAME.yaml here (default: {DEFAULT_EXAMPLE}); plan solve NAME.yaml solves "
                 "it.")
    return "\n".join(lines) + "\n"


def _shell_word(path: str) -> str:
    import shlex
    return shlex.quote(path)
