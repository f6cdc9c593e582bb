"""The catalogs bundled with `plan`, installed as the package `solver.catalogs` (see pyproject.toml).

Only data lives here: YAML files read with importlib.resources by `solver/inputs/bundled.py`."""
