"""The distribution (issue 42): its name, one top-level import package carrying the catalogs and the example
problems, its metadata, and `plan init`.

The wheel is built from a copy of the files a source distribution holds (pyproject.toml, README.md, LICENSE,
solver/, catalogs/, constraints/), so the build never writes into the checkout. It is installed into a fresh
virtual environment that sees this environment's installed dependencies (a `.pth` file: nothing is downloaded),
and its `plan` runs in an empty folder. The tests that build or install are marked `slow` (about 10 s together).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import solver
from cli import main

REPO = Path(__file__).resolve().parent.parent
SOURCE_FILES = ("pyproject.toml", "README.md", "LICENSE")
SOURCE_FOLDERS = ("solver", "catalogs", "constraints")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
DIST_INFO = f"gpu_plan-{solver.__version__}.dist-info"
EXAMPLES = sorted(p.stem for p in (REPO / "constraints").glob("*.yaml"))


# ------------------------------------------------------------------------------------------------ metadata

def test_the_distribution_is_named_gpu_plan_and_installs_the_plan_command() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == solver.DISTRIBUTION == "gpu-plan"  # "plan" on the package index is another project
    assert project["scripts"] == {"plan": "solver.cli:entry"}
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    assert project["requires-python"] == ">=3.11" and project["readme"] == "README.md"
    assert any(c.startswith("Programming Language :: Python :: 3.11") for c in project["classifiers"])
    assert project["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "solver.__version__"}


def test_the_install_hints_name_the_distribution() -> None:
    """`pip install 'plan[chart]'` would install the unrelated project called plan: every hint names gpu-plan."""
    for path in sorted((REPO / "solver").rglob("*.py")) + [REPO / "cli.py"]:
        text = path.read_text()
        wrong = re.findall(r"pip install '?plan\[|version\(\"plan\"\)", text)
        assert wrong == [], f"{path.relative_to(REPO)} says {wrong}"
    from solver.render import chart
    real = importlib.util.find_spec

    def without_matplotlib(name: str, *args: object) -> object:
        return None if name == "matplotlib" else real(name, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(importlib.util, "find_spec", without_matplotlib)
        with pytest.raises(Exception, match=r"pip install 'gpu-plan\[chart\]'"):
            chart.check_available("frontier.svg")


# ---------------------------------------------------------------------------------------------- plan init

def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_init_writes_the_datacenter_example_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = invoke("init")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "datacenter.yaml").read_bytes() == (REPO / "constraints" / "datacenter.yaml").read_bytes()
    assert "plan solve datacenter.yaml" in r.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["datacenter.yaml"], "no temporary file is left behind"


def test_init_refuses_to_overwrite_without_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "datacenter.yaml").write_text("mine\n")
    r = invoke("init")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "datacenter.yaml" in r.stderr and "--force" in r.stderr, r.stderr
    assert (tmp_path / "datacenter.yaml").read_text() == "mine\n"
    r = invoke("init", "--force")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "datacenter.yaml").read_bytes() == (REPO / "constraints" / "datacenter.yaml").read_bytes()


def test_init_output_names_a_file_or_a_folder(tmp_path: Path) -> None:
    r = invoke("init", "finetune-70b", "-o", str(tmp_path / "mine.yaml"))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "mine.yaml").read_bytes() == (REPO / "constraints" / "finetune-70b.yaml").read_bytes()
    r = invoke("init", "lora-small.yaml", "-o", str(tmp_path))  # the file name works as the example's name too
    assert r.exit_code == 0 and (tmp_path / "lora-small.yaml").is_file(), r.output
    r = invoke("init", "-o", str(tmp_path / "missing" / "x.yaml"))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "does not exist" in r.stderr, r.stderr


def test_init_lists_the_examples() -> None:
    r = invoke("init", "--list")
    assert r.exit_code == 0, r.output
    names = [line.split()[0] for line in r.stdout.splitlines() if line and not line.startswith((" ", "plan "))]
    assert names == EXAMPLES
    assert "200B-parameter model from scratch" in r.stdout  # each with what it is


def test_an_unknown_example_gets_did_you_mean() -> None:
    r = invoke("init", "datacentre")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "did you mean 'datacenter'" in r.stderr, r.stderr
    r = invoke("init", "gpt-5")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "finetune-70b" in r.stderr, r.stderr


@pytest.mark.slow
def test_every_example_init_writes_is_valid_in_an_empty_folder(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples name no other file, so a copy anywhere reads the bundled catalogs (about 4 s in all)."""
    monkeypatch.chdir(tmp_path)
    for name in EXAMPLES:
        assert invoke("init", name).exit_code == 0
        r = invoke("validate", f"{name}.yaml")
        assert r.exit_code == 0 and r.stdout.startswith(f"OK: {name}.yaml"), (name, r.output)


# ------------------------------------------------------------------------------------- the wheel, installed

def _build_tools() -> list[str]:
    """pip's options for the build: this environment's setuptools when it is recent enough (the test extra
    installs one), else an isolated build, which downloads setuptools."""
    spec = importlib.util.find_spec("setuptools")
    if spec is not None:
        from importlib.metadata import version
        major = int(version("setuptools").split(".")[0])
        if major >= 77:
            return ["--no-build-isolation"]
    return []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("packaging")
    src = work / "src"
    src.mkdir()
    for name in SOURCE_FILES:
        shutil.copy2(REPO / name, src / name)
    for name in SOURCE_FOLDERS:
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *_build_tools(), "-w",
                        str(work / "dist"), str(src)], capture_output=True, text=True, timeout=300, check=False)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        if not _build_tools():
            pytest.skip(f"setuptools>=77 is not installed here and an isolated build could not get it ({last}); "
                        "pip install -e '.[test]' installs it")
        pytest.fail(r.stderr)
    wheels = list((work / "dist").glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.mark.slow
def test_the_wheel_holds_one_package_with_the_catalogs_and_examples(wheel: Path) -> None:
    assert wheel.name == f"gpu_plan-{solver.__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"solver", DIST_INFO}, "one top-level package (no cli, plan_catalogs)"
    files = set(names)
    modules = {str(p.relative_to(REPO)) for p in (REPO / "solver").rglob("*.py") if "__pycache__" not in p.parts}
    assert modules <= files, sorted(modules - files)
    catalogs = {"solver/" + str(p.relative_to(REPO)) for p in (REPO / "catalogs").rglob("*")
                if p.suffix in (".yaml", ".md")}
    assert catalogs and catalogs <= files, sorted(catalogs - files)
    assert {f"solver/examples/{name}.yaml" for name in EXAMPLES} <= files
    schemas = {f"solver/schemas/{p.name}" for p in (REPO / "solver" / "schemas").glob("*.schema.json")}
    assert "solver/schemas/solve.schema.json" in schemas and schemas <= files, sorted(schemas - files)  # plan schema
    assert f"{DIST_INFO}/licenses/LICENSE" in files
    meta = zipfile.ZipFile(wheel).read(f"{DIST_INFO}/METADATA").decode()
    for line in ("Name: gpu-plan", f"Version: {solver.__version__}", "License-Expression: MIT",
                 "Requires-Python: >=3.11", "Provides-Extra: chart", "Requires-Dist: ortools==9.15.6755"):
        assert line in meta.splitlines(), line
    assert "# plan — a declarative GPU procurement planner" in meta, "the README is the long description"
    entry_points = zipfile.ZipFile(wheel).read(f"{DIST_INFO}/entry_points.txt").decode()
    assert "plan = solver.cli:entry" in entry_points


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed; the dependencies are this environment's (a `.pth`
    file names its site-packages; `.pth` files there, such as an editable install's, are not run)."""
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(home)
    python = home / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                        "--ignore-installed", "--no-index", str(wheel)], capture_output=True, text=True, timeout=300,
                       check=False)
    assert r.returncode == 0, r.stderr
    return home


def _run(home: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{home / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_the_installed_plan_inits_and_solves_in_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    plan = str(installed / "bin" / "plan")
    r = _run(installed, [plan, "init"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["datacenter.yaml"]
    r = _run(installed, [plan, "solve", "datacenter.yaml"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("plan '200b-from-scratch' as of 2026-12-01: OPTIMAL (proven)"), r.stdout[:300]
    r = _run(installed, [plan, "init", "--list"], tmp_path)
    assert r.returncode == 0 and [line.split()[0] for line in r.stdout.splitlines()
                                  if line and not line.startswith((" ", "plan "))] == EXAMPLES
    r = _run(installed, [plan, "schema", "risk"], tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["title"] == "plan risk --format json", r.stderr
    probe = ("import importlib.util, solver, solver.inputs.bundled as b; "
             "print(solver.__file__); print(b.root()); print(importlib.util.find_spec('cli'))")
    r = _run(installed, [str(installed / "bin" / "python"), "-c", probe], tmp_path)
    solver_file, catalogs, cli = r.stdout.split("\n")[:3]
    assert solver_file.startswith(str(installed)) and catalogs.startswith(str(installed)), r.stdout
    assert cli == "None", "nothing installs a top-level cli module"
