"""The files that ship with `plan`: the catalogs and the example problems, found as package data wherever and however
the package was installed.

The repository keeps them at its top (`catalogs/`, `constraints/`); pyproject.toml maps the folders into the one
package as `solver.catalogs` and `solver.examples`, so a wheel, `pipx install` or `pip install .` carry them and
`importlib.resources` finds them. A source tree that was never installed (running `python cli.py` in a fresh
checkout), or an editable install whose import system does not map them, has no such packages; then the folders
next to `solver/` are used. Catalog files are shown as `catalogs/<name>` in messages either way, the path a user of
the repository knows.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from .yamlsrc import MAX_FILE_BYTES, Source, parse_text

PACKAGE = "solver.catalogs"
EXAMPLES_PACKAGE = "solver.examples"
SHOWN_ROOT = "catalogs"
_CHECKOUT = Path(__file__).resolve().parents[2]
_SOURCE_TREE = _CHECKOUT / "catalogs"
_EXAMPLES_TREE = _CHECKOUT / "constraints"


def _folder(package: str, source_tree: Path) -> Traversable:
    """The folder of an installed data package, else its folder in the source tree."""
    try:
        node = resources.files(package)
    except ModuleNotFoundError:
        return source_tree
    return node if node.is_dir() else source_tree


def root() -> Traversable:
    """The folder of bundled catalog files."""
    return _folder(PACKAGE, _SOURCE_TREE)


def catalog_files() -> list[tuple[str, Traversable]]:
    """Every bundled catalog YAML file except the assumptions and the bibliography, as (shown name, file), sorted."""
    out: list[tuple[str, Traversable]] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            name = f"{prefix}/{child.name}"
            if child.is_dir():
                if not child.name.startswith(("_", ".")):
                    walk(child, name)
            elif child.name.endswith((".yaml", ".yml")) and child.name not in NOT_CATALOGS:
                out.append((name, child))

    walk(root(), SHOWN_ROOT)
    return out


NOT_CATALOGS = ("assumptions.yaml", "bibliography.yaml", "calibration.yaml")


def load(name: str) -> Source:
    """Parse one bundled file by its name relative to the catalogs folder (e.g. `assumptions.yaml`)."""
    node = root()
    for part in name.split("/"):
        node = node / part
    return load_traversable(node, f"{SHOWN_ROOT}/{name}")


def load_traversable(node: Traversable, shown: str) -> Source:
    data = node.read_bytes()
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"bundled file {shown} is over {MAX_FILE_BYTES:,} bytes")
    return parse_text(data.decode("utf-8"), shown)


def examples() -> dict[str, Traversable]:
    """The bundled example problems (`constraints/*.yaml` in the repository), by name (the file name without
    `.yaml`), sorted."""
    folder = _folder(EXAMPLES_PACKAGE, _EXAMPLES_TREE)
    found = {c.name[: -len(".yaml")]: c for c in folder.iterdir() if c.name.endswith(".yaml") and c.is_file()}
    return dict(sorted(found.items()))


def example_summary(text: str) -> str:
    """What an example is, in a sentence: the first sentence of the comment at its top."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    words = " ".join(lines)
    end = words.find(". ")
    return (words[:end + 1] if end >= 0 else words).strip()
