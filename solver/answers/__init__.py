"""Stage 5, answers: what a user asks beyond the plan — why an option cannot work (minimal conflicts), how to
get a plan back (exact relaxations), why an option was not chosen (why-not, break-even prices), how robust the
decision is (sensitivity), and what changed since a saved plan (history)."""
