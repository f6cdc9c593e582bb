"""`plan`: a declarative GPU procurement planner.

Stages, as subpackages; data and imports flow one way (tests/test_architecture.py keeps it so):

    inputs -> estimate -> model -> solve -> answers -> render -> cli

- `inputs`: YAML with line numbers, units, the problem file's schema, catalogs, assumptions, policy and rules,
  and `Problem`, the immutable validated whole every later stage reads (what-ifs are new `Problem`s).
- `estimate`: pure estimators (memory, compute, cost) and the universe of options and node-count points.
- `model`: the CP-SAT model (guarded groups, integer money), point screening, bounds, objective. No solving.
- `solve`: the engine every CP-SAT call goes through, the per-pair pipeline, plans, the independent checker.
- `answers`: conflicts, relaxations, why-not, sensitivity, history.
- `render`: reports, JSON, diffs, files.
- `cli`: the command line (`plan`): parses, calls, renders; `cli.py` at the top of a checkout re-exports it.
`errors`, `collect` and `bisection` are shared by all stages.
"""

__version__ = "0.2.0"
"""The version of the distribution (pyproject.toml reads it from here)."""

DISTRIBUTION = "gpu-plan"
"""The name on the package index (`pip install gpu-plan`, `pip install 'gpu-plan[chart]'`); the command is `plan`
and the import package `solver`."""
