"""The catalogs that ship with `plan`: found as package data, wherever and however the package was installed.

`catalogs/` at the top of the repository is installed as the package `plan_catalogs` (pyproject.toml maps the
folder), so a wheel, `pipx install` or `pip install .` carry it and `importlib.resources` finds it. A source tree
that was never installed (running `python cli.py` in a fresh checkout) has no such package; then the folder next
to `solver/` is used. Files are shown as `catalogs/<name>` in messages either way, the path a user of the
repository knows.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from .yamlsrc import MAX_FILE_BYTES, Source, parse_text

PACKAGE = "plan_catalogs"
SHOWN_ROOT = "catalogs"
_SOURCE_TREE = Path(__file__).resolve().parents[2] / "catalogs"


def root() -> Traversable:
    """The folder of bundled catalog files."""
    try:
        return resources.files(PACKAGE)
    except ModuleNotFoundError:
        return _SOURCE_TREE


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
