"""The `plan` console script (`cli.entry`) leaves with `os._exit`: exit codes and output must survive that."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "cli.py", *args], cwd=REPO, capture_output=True, text=True, check=False)


def test_ok_output_is_flushed_and_exit_0() -> None:
    r = _run("validate", "constraints/lora-small.yaml")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("OK: constraints/lora-small.yaml") and r.stdout.endswith("\n")


def test_bad_input_exit_2_one_line_no_traceback() -> None:
    r = _run("validate", "tests/bad_inputs/absurd_params.yaml")
    assert r.returncode == 2
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "workload.params" in r.stderr


def test_usage_error_exit_2() -> None:
    r = _run("no-such-command")
    assert r.returncode == 2 and "No such command" in r.stderr


def test_output_to_a_closed_pipe_does_not_traceback(tmp_path: Path) -> None:
    """More output than a pipe holds (~1,300 catalog rows), read one line, close: no traceback on the way out."""
    import yaml
    quotes = yaml.safe_load((REPO / "catalogs" / "quotes" / "cloud.yaml").read_text())["quotes"]
    many = [{**q, "id": f"{q['id']}-copy{k}"} for k in range(40) for q in quotes]
    (tmp_path / "many.yaml").write_text(yaml.safe_dump({"quotes": many}))
    p = subprocess.Popen([sys.executable, "cli.py", "catalog", "quotes", "--quotes", str(tmp_path / "many.yaml")],
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=120)
    assert "Traceback" not in err, err


def test_missing_dependencies_are_one_line_with_the_install_command(tmp_path):
    """`python3 cli.py solve ...` with an interpreter that lacks ortools (the smoke run's case): exit 2 and the
    README's install command, not a traceback or "internal error". ortools is hidden by an import hook that refuses
    it, as an interpreter without it would."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    hide = ("import sys, runpy\n"
            "class Hide:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'ortools':\n"
            "            raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, Hide())\n"
            "sys.argv = ['cli.py', 'solve', 'constraints/datacenter.yaml']\n"
            "runpy.run_path('cli.py', run_name='__main__')\n")
    r = subprocess.run([sys.executable, "-c", hide], cwd=root, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "missing: ortools" in lines[0] and "pip install -e ." in lines[0], r.stderr
    assert r.stdout == ""
