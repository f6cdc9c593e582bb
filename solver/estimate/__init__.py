"""Stage 2, estimates: pure functions from a `Problem` to numbers — memory per GPU, FLOPs and wall time, cost
lines — and the universe of options and node-count points the model chooses from."""
