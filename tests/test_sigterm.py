"""SIGTERM (`kill PID`, as a service manager or a batch scheduler sends it): exit 143, one line on stderr, and no
process of the command left running (issue 43).

Unlike Ctrl-C, which the terminal sends to the whole process group, `kill PID` reaches the command alone: its pool
workers, forked searches, resource tracker and Ray processes are stopped by it or not at all — they used to be
adopted by init and run on for a minute. Each test runs the real console script path (`python cli.py`, which calls
`cli.entry`) in a session of its own, waits until the command really works (its workers exist), sends SIGTERM, and
then looks for any process left in that session. No timing is asserted beyond generous time-outs.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

REPO = Path(__file__).resolve().parent.parent
DATACENTER = "constraints/datacenter.yaml"
SWEEP = ["sweep", DATACENTER, "--set-grid", "budget.max_usd=9M,12M,20M,30M,40M,60M",
         "--set-grid", "policy.deadline_confidence=0.5,0.8,0.9", "--workers", "2", "--format", "json"]
"""Eighteen points on two workers: several seconds of units, so the signal finds them under way."""
EXIT_TERMINATED = 128 + signal.SIGTERM
STARTED_WITHIN = 60.0
"""Seconds a command may take to start its workers (Ray's start-up on a loaded machine included)."""
GONE_WITHIN = 30.0
"""Seconds the processes of a terminated command may take to disappear."""


def _start(*args: str) -> subprocess.Popen[str]:
    """`plan ARGS` in a new session (its id is the command's pid), so that everything it starts can be found."""
    return subprocess.Popen([sys.executable, "cli.py", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat after the command name (state, ppid, pgrp, session, ...); [] if the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _session(sid: int) -> list[int]:
    """The running processes of session `sid` (a zombie waiting for its new parent to collect it is not running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields and int(fields[3]) == sid and fields[0] not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def _children(pid: int) -> list[int]:
    """The children of process `pid` (forked or spawned by any of its threads)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            pass
    return kids


def _wait_until(p: subprocess.Popen[str], ready: Callable[[], bool]) -> bool:
    """Poll `ready` while the command runs, up to `STARTED_WITHIN` seconds; whether it became true."""
    deadline = time.monotonic() + STARTED_WITHIN
    while p.poll() is None and time.monotonic() < deadline:
        if ready():
            return True
        time.sleep(0.002)
    return False


def _pool_workers(pid: int) -> list[int]:
    return [k for k in _children(pid) if "spawn_main" in _cmdline(k)]


def _ray_units(sid: int) -> list[int]:
    """Ray workers of the session running a unit (Ray names the process after the task it runs)."""
    return [pid for pid in _session(sid) if _cmdline(pid).startswith("ray::as_unit")]


def _left_running(sid: int) -> list[str]:
    """The processes of session `sid` still running once they have had `GONE_WITHIN` seconds to end."""
    deadline = time.monotonic() + GONE_WITHIN
    while (left := _session(sid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [f"{pid} {_cmdline(pid)[:100]}" for pid in left]


def _terminate(p: subprocess.Popen[str], group: bool = False) -> tuple[str, str]:
    """SIGTERM to the command alone (`kill PID`) or, as `timeout` sends it, to its whole process group."""
    if group:
        os.killpg(p.pid, signal.SIGTERM)
    else:
        p.send_signal(signal.SIGTERM)
    return p.communicate(timeout=120)


def _assert_terminated(p: subprocess.Popen[str], out: str, err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert p.returncode == EXIT_TERMINATED, (p.returncode, err)
    assert len(lines) == 1 and "terminated" in lines[0] and "SIGTERM" in lines[0], err
    assert "Traceback" not in err and out == "", (out, err)


def _cleanup(sid: int) -> None:
    """After a failed test: kill what the command left, so that it does not outlive the test run."""
    for pid in _session(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.parametrize("group", [False, True], ids=["kill-pid", "kill-group"])
@pytest.mark.parametrize("after", [0.0, 1.0], ids=["workers-starting", "units-running"])
def test_sigterm_stops_the_process_pool_and_its_resource_tracker(after: float, group: bool) -> None:
    """`plan sweep --executor process`: the two spawned workers and the resource tracker end with the command,
    whether the workers were still starting up or already running units."""
    p = _start(*SWEEP, "--executor", "process")
    try:
        assert _wait_until(p, lambda: len(_pool_workers(p.pid)) == 2), "the pool never started"
        time.sleep(after)
        out, err = _terminate(p, group)
        _assert_terminated(p, out, err)
        assert not _left_running(p.pid), "a worker or the resource tracker outlived the command"
    finally:
        _cleanup(p.pid)


@pytest.mark.parametrize("args", [["solve", DATACENTER, "--processes", "2"],
                                  ["frontier", DATACENTER, "--processes", "2"]], ids=["solve", "frontier"])
@pytest.mark.parametrize("group", [False, True], ids=["kill-pid", "kill-group"])
def test_sigterm_stops_the_forked_searches(args: list[str], group: bool) -> None:
    """The accelerator/mode pairs of `plan solve` (and the dates of `plan frontier`, whose forked searches run for
    seconds) on forked children: none outlives the command."""
    p = _start(*args, "--format", "json")
    try:
        assert _wait_until(p, lambda: bool(_children(p.pid))), "the searches were never forked"
        out, err = _terminate(p, group)
        _assert_terminated(p, out, err)
        assert not _left_running(p.pid), "a forked search outlived the command"
    finally:
        _cleanup(p.pid)


def _ray_starting(sid: int) -> bool:
    """Whether `ray.init` is under way: its raylet runs (the node is half started)."""
    return any("/raylet/raylet" in _cmdline(pid) for pid in _session(sid))


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="Ray is an optional extra (gpu-plan[ray])")
@pytest.mark.parametrize("ready", [_ray_starting, _ray_units], ids=["ray-starting", "units-running"])
def test_sigterm_shuts_ray_down(ready: Callable[[int], bool]) -> None:
    """`plan sweep --executor ray`: the local Ray (GCS, raylet, agents, workers) ends with the command, also when
    `ray.init` had not returned yet (its agents used to be left running), and Ray's own SIGTERM handling (exit 15, a
    C++ stack dump on stderr) does not show."""
    p = _start(*SWEEP, "--executor", "ray")
    try:
        assert _wait_until(p, lambda: bool(ready(p.pid))), "Ray never got that far"
        out, err = _terminate(p)
        _assert_terminated(p, out, err)
        assert not _left_running(p.pid), "a Ray process outlived the command"
    finally:
        _cleanup(p.pid)
