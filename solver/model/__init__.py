"""Stage 3, model: the CP-SAT model over a universe — guarded constraint groups, integer money, the Python
presolve that screens points, lower bounds per point, and the objective. Nothing here solves."""
