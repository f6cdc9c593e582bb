"""Test-wide settings.

Under CI (`CI=true`, set by the CI runner) hypothesis runs derandomized: the same examples every run, so a
landing cannot be blocked by a new random draw. Locally it explores freshly each run; a failure it finds is
printed with a reproducible example to turn into a regression test. Longer soaks:
`PLAN_PROPERTY_EXAMPLES=400 python -m pytest tests/test_optimality.py`.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
