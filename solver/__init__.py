"""`plan`: a declarative GPU procurement planner.

Data flows one way: YAML -> validated models (`problem`, `catalog`, `assumptions`) -> per-option
estimates (`options`, built from the pure estimators `memory`, `compute`, `cost`) -> CP-SAT model
(`model`) -> `Plan` (`plan`) -> independent re-check (`checker`) -> renderers (`render`).
"""

__version__ = "0.1.0"
