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


def _pin_worker() -> None:
    """Each xdist worker runs on one CPU of its own: a solve then searches its pairs in this process instead of
    forking one child per CPU (`solve/forked.py`, `available_cpus` reads the affinity), so two workers on two cores
    do not start four searches that fight for them. Forking is still tested where a test asks for it
    (`--processes 2`, `processes=2`: test_forked.py, test_sigterm.py, …) and gives the same bytes."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or not hasattr(os, "sched_setaffinity"):
        return
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return
    os.sched_setaffinity(0, {cpus[int(worker[2:]) % len(cpus)]})


_pin_worker()
