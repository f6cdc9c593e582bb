"""Stage 6, render: results as terminal reports, Markdown, stable JSON, diffs, catalog tables, charts and files,
and what a terminal needs (control characters escaped, a progress line on stderr)."""
