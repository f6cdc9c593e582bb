"""Stage 1, inputs: YAML with line numbers, units, the problem file's schema, the catalogs, the assumptions,
the meaning of policy and rules, and `Problem`, the immutable validated whole that every later stage reads."""
