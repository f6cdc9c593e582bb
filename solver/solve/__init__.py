"""Stage 4, solve: every CP-SAT call (`engine`), the per-pair pipeline with bound-and-grow, plans and results,
the independent checker, and the exhaustive enumeration the tests compare CP-SAT with."""
