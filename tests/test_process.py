"""`plan` as a process: Ctrl-C, pipes, full disks, closed streams, output files, garbage collection.

These run the real console script path (`python cli.py`, which calls `cli.entry`) in child processes, since signals,
pipes and file descriptors are what is being tested.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import solver.answers.report as report
from cli import main

REPO = Path(__file__).resolve().parent.parent
DATACENTER = "constraints/datacenter.yaml"
FINETUNE = "constraints/finetune-70b.yaml"
SLOW = ["explain", DATACENTER, "--why-not", "h100-sxm"]   # a few seconds of explanation solves


def _run(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "cli.py", *args], cwd=REPO, capture_output=True, text=True, check=False,
                          timeout=300, **kw)


@pytest.fixture(scope="module")
def slow_answer() -> str:
    r = _run(*SLOW)
    assert r.returncode == 0, r.stderr
    return r.stdout


# ---------------------------------------------------------------------------------------------- Ctrl-C


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="searches are forked on Linux only")
@pytest.mark.parametrize("after", [0.0, 0.005, 0.02])
def test_ctrl_c_as_the_searches_are_forked_stops_every_process_quietly(after: float) -> None:
    """Ctrl-C as the terminal sends it (to the whole process group) just as the children start: exit 130, no
    answer, no traceback from the parent or a child, and no child left running."""
    p = subprocess.Popen([sys.executable, "cli.py", "solve", DATACENTER, "--processes", "2", "--format", "json"],
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    children: list[str] = []
    while not children and p.poll() is None:
        try:
            children = Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()
        except OSError:
            pass
        time.sleep(0.001)
    if p.poll() is None:
        time.sleep(after)
        os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert children, "the search was never forked"
    assert "Traceback" not in err
    assert p.returncode == 130 and out == "" and err.strip().endswith("interrupted"), (p.returncode, err)
    assert not _running(children), "a forked search outlived its parent"


def _running(pids: list[str], grace: float = 5.0) -> list[str]:
    """The processes among `pids` still running `grace` seconds after the command exited (a process that has
    exited but whose parent has not collected it yet — a zombie — is not running). Exiting is not instant: right
    after the command's own exit, a worker interrupted with it may still be tearing down, or be a zombie until the
    process that adopts it collects it; CI once saw both pool workers there, alive for /proc, at the first look."""
    end = time.monotonic() + grace
    while True:
        alive = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):
                alive.append(pid)
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.01)


def _pool_workers(pid: int) -> list[str]:
    """The process-pool workers among a process's children (spawned: their command line says so)."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    found = []
    for kid in kids:
        try:
            if b"spawn_main" in Path(f"/proc/{kid}/cmdline").read_bytes():
                found.append(kid)
        except OSError:
            pass
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("delay", [0.0, 1.0])
def test_ctrl_c_while_the_sweeps_run_on_the_pool_says_interrupted_once(delay: float) -> None:
    """`plan sensitivity` with its sweeps on a process pool: Ctrl-C to the whole process group stops the command
    and every worker, and only the command says "interrupted" — each worker used to say it too, or, caught while
    Python itself started up there, print a "Fatal Python error"."""
    p = subprocess.Popen([sys.executable, "cli.py", "sensitivity", FINETUNE, "--sweep", "tokens", "--workers", "2",
                          "--format", "json"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    workers: list[str] = []
    while len(workers) < 2 and p.poll() is None:
        workers = _pool_workers(p.pid)
        time.sleep(0.005)
    if p.poll() is None:
        time.sleep(delay)  # the workers still importing, or running their units
        os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert len(workers) == 2, "the pool never started"
    assert p.returncode == 130 and out == "" and err.strip() == "interrupted", (p.returncode, err)
    assert not _running(workers), "a pool worker outlived the command"


def _wait_until_imports_begin(pid: int) -> None:
    """Until the process has mapped its first compiled module from site-packages: `cli.py` has installed its Ctrl-C
    handler by then (its first lines run before any import of a dependency). Before it, a SIGINT lands in CPython's
    own start-up (site, .pth files), where no program can install a handler, so the tests start their clocks here
    (on Linux; elsewhere at once)."""
    maps = Path(f"/proc/{pid}/maps")
    end = time.monotonic() + 30
    while maps.exists() and time.monotonic() < end:
        try:
            if "site-packages" in maps.read_text():
                return
        except OSError:
            return
        time.sleep(0.001)


@pytest.mark.parametrize("delay", [0.1, 0.3, 1.2, 2.4])
def test_ctrl_c_during_an_explanation_exits_130_with_no_or_the_whole_answer(delay: float, slow_answer: str) -> None:
    """SIGINT at any moment once `cli.py` runs: "interrupted" and exit 130 with nothing on stdout — or, if the
    command had already finished, its complete, unchanged answer. Never a partial answer, never a traceback, never
    exit 1."""
    p = subprocess.Popen([sys.executable, "cli.py", *SLOW], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    _wait_until_imports_begin(p.pid)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert "Traceback" not in err
    if p.returncode == 130:
        assert out == "" and err.strip().endswith("interrupted")
    else:
        assert p.returncode == 0, (p.returncode, err)
        assert out == slow_answer


def test_an_error_that_ctrl_c_caused_is_reported_as_the_interruption(capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C while numpy initialises under a lazy import surfaces as ImportError("initialization failed"); after a
    SIGINT, any error is the interruption (exit 130), while the same error without one stays internal (exit 4)."""
    from solver.render import console

    def body(out: object) -> int:
        raise ImportError("initialization failed")

    def interrupted_body(out: object) -> int:
        try:
            console.on_sigint(signal.SIGINT, None)
        except KeyboardInterrupt:
            raise ImportError("initialization failed") from None
        return 0

    assert console.run(body) == 4
    assert "INTERNAL ERROR" in capsys.readouterr().err
    assert console.run(interrupted_body) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
    assert console.run(body) == 4, "a Ctrl-C of an earlier run does not excuse a later error"


def test_an_interrupted_search_is_never_reported(slow_answer: str) -> None:
    """The engine stops the CP-SAT search on Ctrl-C and raises; CP-SAT's own handler (which ends a search as if it
    had finished) is off, so no interrupted search can come back as a proof."""
    from solver.model.cpsat import cp_model
    from solver.solve.engine import Engine, Limits
    assert Engine(Limits()).solver().parameters.catch_sigint_signal is False
    assert cp_model.CpSolver().parameters.catch_sigint_signal is True, "the default this guards against"


# ---------------------------------------------------------------------------------------------- pipes, disks


def test_a_reader_that_stops_early_is_exit_0() -> None:
    """`plan solve … | head -3`: the reader goes away; plan exits 0 quietly, every time."""
    for _ in range(2):
        p = subprocess.Popen([sys.executable, "cli.py", "solve", FINETUNE], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stderr is not None
        for _line in range(3):
            p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read()
        assert p.wait(timeout=120) == 0, err
        assert "Traceback" not in err


def test_a_full_disk_is_one_line_and_exit_2() -> None:
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "cli.py", "solve", FINETUNE], cwd=REPO, stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == "error: cannot write the answer to standard output: disk full"
    assert "Traceback" not in r.stderr


def test_a_closed_stdout_is_one_line_and_exit_2() -> None:
    r = subprocess.run([sys.executable, "cli.py", "solve", FINETUNE], cwd=REPO, stderr=subprocess.PIPE, text=True,
                       timeout=120, preexec_fn=lambda: os.close(1))
    assert r.returncode == 2
    assert "standard output is closed" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------------------------- --save


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a solve starts: output paths must be checked before any work."""
    def refuse(*args, **kwargs):
        raise AssertionError("the solve ran before the output path was checked")
    monkeypatch.setattr(report, "solve_and_explain", refuse)


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder no one can create files in: read-only for a normal user; for root, a kernel file system."""
    if os.geteuid() == 0:
        return Path("/sys/kernel")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    return folder


@pytest.mark.parametrize("case", ["missing-folder", "read-only-folder", "a-folder", "a-device"])
def test_save_target_is_checked_before_solving(case: str, tmp_path: Path, no_solve: None) -> None:
    target = {"missing-folder": tmp_path / "no-such-dir" / "plan.json",
              "read-only-folder": _unwritable_folder(tmp_path) / "plan.json",
              "a-folder": tmp_path, "a-device": Path("/dev/full")}[case]
    r = CliRunner().invoke(main, ["solve", str(REPO / FINETUNE), "--save", str(target)])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(f"error: --save {target}: ") and r.stderr.count("\n") == 1, r.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode), "a device is never replaced by a file"


def test_save_honours_the_umask_and_keeps_an_existing_mode(tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    old = os.umask(0o022)
    try:
        assert CliRunner().invoke(main, ["solve", str(REPO / FINETUNE), "--save", str(new)]).exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(new.stat().st_mode) == 0o644
    private = tmp_path / "private.json"
    private.write_text("{}")
    private.chmod(0o600)
    assert CliRunner().invoke(main, ["solve", str(REPO / FINETUNE), "--save", str(private)]).exit_code == 0
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert json.loads(private.read_text())["kind"] == "plan-result"


def test_save_removes_temporary_files_a_killed_run_left(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    leftover = tmp_path / f".plan.json.{dead.pid}.tmp"
    leftover.write_text("")
    assert CliRunner().invoke(main, ["solve", str(REPO / FINETUNE), "--save", str(target)]).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_concurrent_saves_leave_one_whole_plan(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    procs = [subprocess.Popen([sys.executable, "cli.py", "solve", FINETUNE, "--save", str(target)], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(3)]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    assert json.loads(target.read_text())["result"]["plan"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_save_replaces_a_symlink_not_its_target(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("keep")
    link = tmp_path / "plan.json"
    link.symlink_to(elsewhere)
    assert CliRunner().invoke(main, ["solve", str(REPO / FINETUNE), "--save", str(link)]).exit_code == 0
    assert not link.is_symlink() and json.loads(link.read_text())["kind"] == "plan-result"
    assert elsewhere.read_text() == "keep"


# ---------------------------------------------------------------------------------------------- the process


def test_garbage_collection_is_restored_after_a_command() -> None:
    assert gc.isenabled()
    r = CliRunner().invoke(main, ["solve", str(REPO / FINETUNE), "--format", "json"])
    assert r.exit_code == 0
    assert gc.isenabled(), "a command pauses collection while it runs and restores it after"


def test_debug_model_writes_every_model_and_its_log(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    r = CliRunner().invoke(main, ["solve", str(REPO / FINETUNE), "--debug-model", str(folder), "--format", "json"])
    assert r.exit_code == 0
    models = sorted(folder.glob("*.pbtxt"))
    logs = sorted(folder.glob("*.log"))
    assert models and len(models) == len(logs)
    assert "variables" in models[0].read_text()
    assert any("Starting" in p.read_text() or "#Done" in p.read_text() or "CpSolverResponse" in p.read_text()
               for p in logs)
    plain = CliRunner().invoke(main, ["solve", str(REPO / FINETUNE), "--format", "json"])
    assert plain.stdout == r.stdout, "logging the search does not change the answer"


@pytest.mark.parametrize("quiet", [False, True])
def test_the_resource_tracker_cleans_up_without_a_word(quiet: bool) -> None:
    """A spawn-context semaphore still registered when the process leaves by `os._exit` (as the console script does
    after Ctrl-C, with a pool's queues alive): the tracker warns of a leak unless it was started quiet, which the
    sweeps' process pool does (`executors.quiet_resource_tracker`)."""
    code = ("import multiprocessing, os\n"
            "from solver.answers.executors import quiet_resource_tracker\n"
            + ("quiet_resource_tracker()\n" if quiet else "")
            + "lock = multiprocessing.get_context('spawn').Lock()\n"
            "os._exit(0)\n")
    # The tracker inherits stderr and writes after this process is gone; `run` reads the pipe until it closes.
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert ("leaked semaphore" in done.stderr) != quiet, done.stderr


def test_a_signal_python_cannot_raise_is_dropped_quietly_and_nothing_else() -> None:
    """A Ctrl-C that lands in a weakref callback of the import system is "unraisable": Python prints "Exception
    ignored in …" and a traceback unless the hook drops it (the command still ends with exit 130, `console.run`).
    Any other unraisable exception still reaches the previous hook."""
    from types import SimpleNamespace

    from solver.render.console import Terminated, quiet_unraisable
    seen: list[object] = []
    hook = quiet_unraisable(seen.append)
    hook(SimpleNamespace(exc_value=KeyboardInterrupt()))
    hook(SimpleNamespace(exc_value=Terminated()))
    assert seen == []
    other = SimpleNamespace(exc_value=ValueError("a bug"))
    hook(other)
    assert seen == [other]
