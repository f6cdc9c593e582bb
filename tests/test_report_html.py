"""`plan report FILE -o report.html`: one self-contained page to forward (README, "A report to forward").

The page is written twice from the same inputs (byte-identical), checked against `plan solve --format json`, read
for what it must never contain (anything fetched from the network, unescaped user text), and opened in a real
browser when one is installed: headless Chromium dumps its DOM and prints it to PDF (skipped, with the reason,
only when no chromium binary exists). The commands run once, in module-scoped fixtures (each report is a solve, a
risk analysis and a frontier of its two ends: 4-6 s).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from solver.estimate.payments import Order, PaymentTerms, Spend, by_quarter, payments
from solver.inputs.units import usd

REPO = Path(__file__).resolve().parent.parent
DATACENTER = "constraints/datacenter.yaml"
INFEASIBLE = "constraints/infeasible-budget.yaml"
HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'


def plan_cmd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "cli.py", *args], cwd=REPO, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Two reports of the bundled 200B problem, and its `plan solve --format json` answer."""
    out = tmp_path_factory.mktemp("report")
    runs = [plan_cmd("report", DATACENTER, "-o", str(out / name), "--points", "2") for name in ("a.html", "b.html")]
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert "wrote" in r.stdout and r.stderr == ""
    solved = plan_cmd("solve", DATACENTER, "--format", "json")
    assert solved.returncode == 0, solved.stderr
    return {"a": out / "a.html", "b": out / "b.html", "json": json.loads(solved.stdout)}


def test_the_page_is_written_and_identical_on_two_runs(pages: dict[str, object]) -> None:
    a, b = pages["a"], pages["b"]
    assert isinstance(a, Path) and isinstance(b, Path)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_the_page_is_self_contained(pages: dict[str, object]) -> None:
    html = Path(str(pages["a"])).read_text(encoding="utf-8")
    assert not re.search(r"<script\b[^>]*\bsrc\s*=", html, re.I)
    for tag in re.findall(r"<(?:script|link|img|iframe|source|video|audio|object|embed)\b[^>]*>", html, re.I):
        assert not re.search(r"""(?:src|href|data)\s*=\s*["']?\s*(?:https?:)?//""", tag, re.I), tag
    assert "@import" not in html and "url(" not in html  # no fetched stylesheet, font or image in the CSS
    assert "<script" not in html.lower()
    assert "@media print" in html


def test_the_page_states_the_plan_as_plan_solve_does(pages: dict[str, object]) -> None:
    html = Path(str(pages["a"])).read_text(encoding="utf-8")
    plan = pages["json"]["plan"]  # type: ignore[index]
    total = plan["cost_usd"]["total"]
    assert plan["system"] in html
    assert f"{plan['nodes']} {plan['system']} nodes" in html            # the decision sentence
    assert f"{plan['nodes']:,} nodes = {plan['gpus']:,} GPUs" in html    # the chosen plan's facts
    assert usd(total) in html and f"${total:,.0f}" in html
    assert f"${plan['cash_usd']['total']:,.0f}" in html
    for q in plan["quotes"]:
        assert q["id"] in html and f"${q['price']:,.2f}/GPU-h" in html
    assert f"{round(plan['risk']['p_deadline'] * 100)}% chance" in html
    assert pages["json"]["as_of"] in html  # type: ignore[index]


def test_the_page_has_every_section_and_its_charts(pages: dict[str, object]) -> None:
    html = Path(str(pages["a"])).read_text(encoding="utf-8")
    for ident in ("decision", "plan", "waterfall", "cash", "risk", "frontier", "alternatives", "cannot-work",
                  "sources"):
        assert f'<section id="{ident}">' in html, ident
    assert html.count("<svg") >= 3
    assert html.count("<svg") == html.count("</svg>")
    nodes = pages["json"]["plan"]["nodes"]  # type: ignore[index]
    assert f"chosen: {nodes} nodes" in html                    # the frontier marks the chosen plan
    assert "deadline 2027-10-01" in html                       # on the frontier and the finish histogram
    assert "achieved MFU" in html                              # the tornado
    assert "constraints/datacenter.yaml:" in html              # a minimal conflict's file:line
    assert "risk.money.delay_cost_usd_per_day" in html and "$50,000" in html   # the overridden assumption
    assert "[S201]" in html                                    # the bibliography the chosen quote cites
    assert "2027-Q1" in html                                   # cash by quarter
    version = plan_cmd("--version").stdout.split()[-1]
    assert f"plan {version}" in html


def test_user_text_is_escaped_and_a_plan_less_page_shows_the_conflict(tmp_path: Path) -> None:
    text = (REPO / INFEASIBLE).read_text(encoding="utf-8")
    name = re.search(r"^name:.*$", text, re.M)
    assert name is not None
    problem = tmp_path / "hostile.yaml"
    problem.write_text(text.replace(name.group(0), f"name: {json.dumps(HOSTILE)}"), encoding="utf-8")
    out = tmp_path / "no-plan.html"
    r = plan_cmd("report", str(problem), "-o", str(out))
    assert r.returncode == 1, r.stderr
    html = out.read_text(encoding="utf-8")
    assert HOSTILE not in html and "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "No plan satisfies all constraints." in html
    assert "budget.max_usd" in html and "hostile.yaml:" in html   # the conflict with its file:line


def test_refusals_are_one_line_exit_2(tmp_path: Path) -> None:
    """An unwritable output is refused before any work (a program's page: tests/test_program_report.py)."""
    r = plan_cmd("report", DATACENTER, "-o", str(tmp_path / "missing" / "r.html"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--output" in r.stderr


def _bought_spend() -> Spend:
    """Two bought quotes ordered together and delivered in different quarters, a run across a quarter's end."""
    terms = PaymentTerms(deposit_pct=20, payment_terms_days=30)
    lots = (Order("q1", 500.0, date(2027, 1, 1), date(2027, 2, 10), terms),
            Order("q2", 500.0, date(2027, 1, 1), date(2027, 4, 2), terms))
    cash = {"compute": 900.0, "network_storage": 100.0, "energy": 90.0, "porting": 7.0}
    return Spend(tuple(cash.items()), date(2027, 5, 1), date(2027, 8, 1), 92.0, lots)


def test_cash_by_quarter_places_each_line_and_adds_up_to_the_cash() -> None:
    quarters = by_quarter(payments(_bought_spend()))
    got = {q.quarter: (round(q.usd, 6), round(q.hardware_usd, 6)) for q in quarters}
    # hardware (1,000): 20% deposits (100 + 100) on the order day 2027-01-01, the balances (400 each) 30 days after
    # delivery: 2027-03-12 (Q1) and 2027-05-02 (Q2); porting (7) on the start; energy (90) monthly in arrears over
    # the run's 92 days = 92 / (730 / 24) months from 2027-05-01: a full month's share on 2027-06-01 (Q2), the rest
    # in Q3. What the page charts (`Dossier.quarters`) is the plan's `cash_by_quarter`, made by the same function.
    month = 90 * (730 / 24) / 92
    assert got == {"2027-Q1": (600.0, 600.0), "2027-Q2": (round(400 + 7 + month, 6), 400.0),
                   "2027-Q3": (round(90 - month, 6), 0.0)}
    assert sum(q.usd for q in quarters) == pytest.approx(1097.0)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_a_browser_renders_and_prints_the_page(pages: dict[str, object], tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium binary (chromium or chromium-browser) on PATH: Debian's `chromium` package")
    page = Path(str(pages["a"])).resolve()
    flags = ["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    plan = pages["json"]["plan"]  # type: ignore[index]
    assert "<svg" in dom.stdout and f"{plan['nodes']} {plan['system']} nodes" in dom.stdout
    assert "The chosen plan" in dom.stdout
    pdf = tmp_path / "report.pdf"
    printed = subprocess.run([browser, *flags, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri()],
                             capture_output=True, text=True, timeout=120)
    assert printed.returncode == 0, printed.stderr[-2000:]
    assert pdf.exists() and pdf.stat().st_size > 10_000
    assert pdf.read_bytes().startswith(b"%PDF")
