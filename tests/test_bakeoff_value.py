"""What the bake-offs are worth (`program.decision`, issue 40 part 2).

- the residual a bake-off leaves (`uncertainty.bakeoff_residual_sigma`) is recomputed from the published pairs its
  source cites, with the planner's own MFU model;
- the two-stage decision (`estimate/program_decision.py`) on hand-built two-platform cases — a bake-off worth
  running (platforms close in expected cost, a wide prior, a small residual) and ones that are not (one platform
  clearly cheaper; the wait too dear) — against an independent computation: each platform's posterior and the
  expected cost of a cost linear in 1/θ in closed form, on the same draws;
- the Gaussian update against the information form of the same update, with a common part and correlated signals;
- on a small program: a plan's cost at an MFU factor between two grid points against a direct solve of the program
  re-estimated there (`workload.measured_mfu`), a level's candidates against re-estimation, a case worth running and
  one that is not, and the same JSON twice; on program-200b the reported figures hold together.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from solver.answers.program import solve_program
from solver.answers.program_decision import (GRID_Z, LEVEL_INDEX, _affected, _restricted, _setting, _solve, response,
                                             without)
from solver.estimate.calculator import EstimateInput, run_estimate
from solver.estimate.point_estimates import workload_utilisation
from solver.estimate.program_decision import BakeoffSignal, DecisionAction, DecisionPlatform, draw, posterior, two_stage
from solver.estimate.uncertainty import Draws
from solver.inputs.assumptions import BakeoffResidual, load_assumptions
from solver.inputs.catalog import load_catalog
from solver.inputs.program import load_program
from solver.render.jsonout import to_json
from solver.render.program import program_dict
from solver.solve.engine import Limits
from solver.solve.program import optimise

ROOT = Path(__file__).resolve().parent.parent
TODAY = date(2026, 12, 1)
A = load_assumptions(None).values

# --- the residual, from the sources its assumption cites --------------------------------------------------------

H100 = {"gpt3-5b": (5e9, 64, 2048, 765), "gpt3-175b": (175e9, 512, 2048, 888), "llama2-7b": (7e9, 8, 4096, 780),
        "llama2-70b": (70e9, 64, 4096, 768), "nemotron-8b": (8e9, 64, 4096, 643),
        "nemotron-340b": (340e9, 128, 4096, 686), "llama3-8b": (8e9, 8, 8192, 711), "llama3-70b": (70e9, 64, 8192, 734)}
"""[nvidia2024-nemo-perf-2412]: (parameters, GPUs, sequence, model TFLOP/s per GPU at FP8)."""
GB200 = {"llama3-8b": (8e9, 8, 8192, 1917), "llama3-70b": (70e9, 64, 8192, 1943),
         "llama3-405b": (405e9, 128, 8192, 1763), "nemotron-15b": (15e9, 64, 4096, 1674),
         "nemotron-340b": (340e9, 128, 4096, 1551)}
"""[nvidia2025-nemo-perf-2504], DGX-GB200."""


def _residual(table: Mapping[str, tuple[float, int, int, float]], accelerator: str, small: str, large: str) -> float:
    """ln(measured large ÷ small throughput) less ln(the planner's MFU × scale-out, large ÷ small)."""
    cat = load_catalog([])

    def modelled(key: str) -> float:
        p, gpus, seq, _ = table[key]
        e = run_estimate(EstimateInput(accelerator=accelerator, gpus=gpus, params=p, tokens=1e12, seq_len=seq,
                                       precision="fp8"), cat, A)
        return float(e["mfu"]) * float(e["scale_out_efficiency"])

    return math.log(table[large][3] / table[small][3]) - math.log(modelled(large) / modelled(small))


def test_the_residual_is_what_the_published_pairs_give() -> None:
    pairs = [_residual(H100, "h100-sxm", "gpt3-5b", "gpt3-175b"),
             _residual(H100, "h100-sxm", "llama2-7b", "llama2-70b"),
             _residual(H100, "h100-sxm", "nemotron-8b", "nemotron-340b"),
             _residual(H100, "h100-sxm", "llama3-8b", "llama3-70b"),
             _residual(GB200, "gb200", "llama3-8b", "llama3-405b"),
             _residual(GB200, "gb200", "nemotron-15b", "nemotron-340b")]
    rms = math.sqrt(sum(d * d for d in pairs) / len(pairs))
    r = A.uncertainty.bakeoff_residual_sigma
    assert abs(math.hypot(r.common, r.platform) - rms) < 0.01, rms
    same_pair = abs(_residual(H100, "h100-sxm", "llama3-8b", "llama3-70b")
                    - _residual(GB200, "gb200", "llama3-8b", "llama3-70b"))
    assert same_pair / math.sqrt(2) <= r.platform <= 0.1
    assert r.platform < A.uncertainty.mfu_sigma.software["rocm"]


# --- the two-stage decision by hand ------------------------------------------------------------------------------

SIGMA = 0.3
LOG_GRID = SIGMA * np.linspace(-4.5, 4.5, 721)


def _linear(platform: int, fixed: float, per_theta: float, shift: float = 0.0) -> DecisionAction:
    """An action costing fixed + per_theta / θ (a rented run: its hours are 1/θ), tabulated finely in ln θ."""
    return DecisionAction(platform, f"p{platform}", LOG_GRID, fixed + shift + per_theta * np.exp(-LOG_GRID))


def _by_hand(now: list[tuple[float, float]], after: list[tuple[float, float]], shift: float, residual: float,
             draws: Draws) -> tuple[float, float, np.ndarray]:
    """Two independent platforms, one bake-off each with its own residual: the posterior of ln θ_p is normal with
    mean σ²/(σ² + σr²)·y and variance σ²σr²/(σ² + σr²) (decision notes §4), and E[1/θ] = exp(−m + v/2). Returns the
    expected cost deciding now and after, and the platform chosen after, per scenario."""
    log_theta = np.stack([SIGMA * draws.normal(f"mfu:software:p{i}") for i in range(2)], axis=1)
    y = log_theta + residual * np.stack([draws.normal(f"bakeoff:b{i}") for i in range(2)], axis=1)
    prior = [f + v * math.exp(SIGMA ** 2 / 2) for f, v in now]
    best = int(np.argmin(prior))
    cost_now = now[best][0] + now[best][1] * np.exp(-log_theta[:, best])
    gain = SIGMA ** 2 / (SIGMA ** 2 + residual ** 2)
    var = SIGMA ** 2 * residual ** 2 / (SIGMA ** 2 + residual ** 2)
    expected = np.stack([f + shift + v * np.exp(-gain * y[:, i] + var / 2) for i, (f, v) in enumerate(after)], axis=1)
    chosen = np.argmin(expected, axis=1)
    pay = np.array([after[c][0] + shift + after[c][1] * math.exp(-log_theta[s, c]) for s, c in enumerate(chosen)])
    return float(cost_now.mean()), float(pay.mean()), chosen


def _two_platforms(now: list[tuple[float, float]], after: list[tuple[float, float]], shift: float,
                   residual: float) -> tuple[float, float, float, float]:
    """(value by the module, its standard error, value by hand, share of scenarios choosing alike)."""
    platforms = [DecisionPlatform(f"p{i}", ((f"mfu:software:p{i}", SIGMA),)) for i in range(2)]
    signals = [BakeoffSignal(f"b{i}", i) for i in range(2)]
    res = BakeoffResidual(common=0.0, platform=residual)
    draws = Draws(20261201, 20000)
    st = two_stage([_linear(i, f, v) for i, (f, v) in enumerate(now)],
                   [_linear(i, f, v, shift) for i, (f, v) in enumerate(after)], platforms, signals, res, draws)
    now_hand, after_hand, chosen = _by_hand(now, after, shift, residual, draws)
    diff = st.now - st.after
    return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff))), now_hand - after_hand, \
        float(np.mean(st.chosen == chosen))


def test_a_bakeoff_is_worth_running_between_close_platforms_with_a_wide_prior() -> None:
    """Two platforms within 2% of each other, σ 0.3 each, a residual of 0.03, the bake-offs and their wait $5k: the
    information is worth far more than that."""
    costs = [(50_000.0, 1_000_000.0), (40_000.0, 1_020_000.0)]
    value, se, by_hand, alike = _two_platforms(costs, costs, 5_000.0, 0.03)
    assert alike > 0.995
    assert abs(value - by_hand) < 0.002 * 1_000_000
    assert value > 100_000 and value > 10 * se


def test_a_bakeoff_is_not_worth_running_when_one_platform_is_clearly_cheaper() -> None:
    """One platform at a fifth of the other's cost (3.8σ of their difference): a bake-off almost never changes the
    choice, so deciding after pays the bake-offs for next to nothing. (At half the cost it would pay: the
    difference of two independent σ 0.3 priors exceeds ln 2 in 5% of outcomes.)"""
    costs = [(0.0, 1_000_000.0), (0.0, 5_000_000.0)]
    value, _se, by_hand, alike = _two_platforms(costs, costs, 5_000.0, 0.03)
    assert alike > 0.9999
    assert value == pytest.approx(by_hand, abs=50.0)
    assert -5_000.0 <= value < -4_900.0


def test_a_bakeoff_is_not_worth_its_wait_when_the_wait_is_dear() -> None:
    """The close platforms of the first case, but the wait costs $300k: the information does not pay for it."""
    costs = [(50_000.0, 1_000_000.0), (40_000.0, 1_020_000.0)]
    value, se, by_hand, _alike = _two_platforms(costs, costs, 300_000.0, 0.03)
    assert abs(value - by_hand) < 0.002 * 1_000_000
    assert value < -10 * se < 0


def test_the_posterior_matches_the_information_form() -> None:
    """A shared MFU part, two stacks, a third platform with no bake-off, and residuals with a part shared by every
    bake-off: K·y and the posterior σ against Λ = I + Aᵀ R⁻¹ A on the latent MFU sources."""
    platforms = [DecisionPlatform("a", (("mfu:common", 0.22), ("mfu:software:x", 0.15))),
                 DecisionPlatform("b", (("mfu:common", 0.22),)),
                 DecisionPlatform("c", (("mfu:common", 0.22), ("mfu:software:y", 0.10)))]
    signals = [BakeoffSignal("ga", 0), BakeoffSignal("gb", 1)]
    res = BakeoffResidual(common=0.18, platform=0.05)
    k, sd = posterior(platforms, signals, res)
    names = ["mfu:common", "mfu:software:x", "mfu:software:y"]
    b = np.array([[dict(p.loadings).get(n, 0.0) for n in names] for p in platforms])
    a = b[[0, 1]]
    r = res.common ** 2 * np.ones((2, 2)) + res.platform ** 2 * np.eye(2)
    precision = np.eye(3) + a.T @ np.linalg.solve(r, a)
    cov = np.linalg.inv(precision)
    y = np.array([0.1, -0.05])
    mean = cov @ a.T @ np.linalg.solve(r, y)
    assert np.allclose(k @ y, b @ mean)
    assert np.allclose(sd, np.sqrt(np.einsum("ij,jk,ik->i", b, cov, b)))
    log_theta, signal = draw(Draws(1, 50_000), platforms, signals, res)
    prior_var = 0.22 ** 2 + 0.15 ** 2
    expected = prior_var / math.sqrt(prior_var * (prior_var + res.common ** 2 + res.platform ** 2))
    assert np.corrcoef(log_theta[:, 0], signal[:, 0])[0, 1] == pytest.approx(expected, abs=0.01)


# --- on a small program ----------------------------------------------------------------------------------------------

PROGRAM = """\
name: bakeoff-test
as_of: 2026-12-01
workloads:
  - id: bake-b200
    workload: {method: pretrain, params: 7B, tokens: 20B, seq_len: 4096}
    policy: {accelerators: {include: [b200]}}
  - id: bake-mi355x
    workload: {method: pretrain, params: 7B, tokens: 20B, seq_len: 4096}
    policy: {accelerators: {include: [mi355x]}}
  - id: main
    workload: {method: pretrain, params: 70B, tokens: 1.4T, seq_len: 4096}
    after: [bake-b200, bake-mi355x]
    decide_after: [bake-b200, bake-mi355x]
    schedule: {deadline: 2027-12-31}
schedule: {earliest_start: 2027-01-04, deadline: 2028-06-30}
policy: {modes: [cloud], accelerators: {include: [b200, mi355x]}}
risk: {money: {delay_cost_usd_per_day: 50k}}
"""
PRICES = ("quotes.tensorwave-mi355x-8x-cluster-estimate.usd_per_gpu_hour=2.95",)
CLOSE = PRICES + ("quotes.lambda-b200-1x-ondemand.usd_per_gpu_hour=4.2",)
"""B200 by the GPU-hour at a price where the two platforms are close in expected cost."""
TIGHT = "workloads.main.schedule.deadline=2027-07-15"


@pytest.fixture(scope="module")
def program_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    f = tmp_path_factory.mktemp("bakeoff") / "bakeoff.yaml"
    f.write_text(PROGRAM)
    return f


def _report(f: Path, *sets: str):
    return solve_program(load_program(str(f), list(sets), today=TODAY), Limits(time_limit=30))


def test_on_a_program_a_close_pair_is_worth_its_bakeoffs_and_a_clear_one_is_not(program_file: Path) -> None:
    close = _report(program_file, *CLOSE).decision
    assert close is not None and close.value_usd > 3 * close.standard_error_usd > 0
    assert min(share for _, share in close.shares) > 0.1
    clear = _report(program_file, *PRICES).decision
    assert clear is not None and clear.value_usd < 0
    assert abs(clear.information_usd) < 0.01 * clear.now_usd
    assert clear.value_usd == pytest.approx(clear.information_usd - clear.gate_usd, abs=1.0)
    for d in (close, clear):
        assert d.value_usd == pytest.approx(d.now_usd - d.after_usd, rel=1e-9, abs=1.0)
        assert d.information_usd <= d.perfect_information_usd + 3 * d.information_error_usd
        assert sum(share for _, share in d.shares) == pytest.approx(1.0)


def _remeasured(f: Path, accelerator: str, theta: float, *sets: str):
    """The program re-estimated with main's MFU on `accelerator` at θ × the modelled one, no MFU spread left, and
    main's deadline moved to the program's (lateness is priced below, not forbidden)."""
    pp = load_program(str(f), list(sets), today=TODAY)
    problem = pp.problem_of("main")
    mfu = workload_utilisation(problem.spec, problem.assumptions.values,
                               problem.catalog.accelerators[accelerator], 1.0)
    return load_program(str(f), list(sets) + [f"workloads.main.workload.measured_mfu={{{accelerator}: {mfu * theta}}}",
                                              "risk.uncertainty.measured_mfu_sigma=0",
                                              "workloads.main.schedule.deadline=2028-06-30"], today=TODAY)


@pytest.mark.parametrize("z", [0.6, -1.6])
def test_a_plans_cost_between_grid_points_is_a_direct_solve_there(program_file: Path, z: float) -> None:
    """The median-level plan on MI355X, with main due 2027-07-15, priced at θ = exp(σz) between two grid points
    (z = −1.6: the run is late), against the program re-estimated at that θ and solved with main on the same quote
    and nodes: cost plus the late days at the late price, within 0.5% (and the day the program rounds up)."""
    sets = CLOSE + (TIGHT,)
    rep = _report(program_file, *sets)
    s = _setting(rep.program, rep.data, "main", Limits(time_limit=30))
    sigma = math.sqrt(A.uncertainty.mfu_sigma.common ** 2 + A.uncertainty.mfu_sigma.software["rocm"] ** 2)
    s.tables.grid["mi355x"] = sigma * GRID_Z
    after = without(rep.data, ())
    j = LEVEL_INDEX[2]
    plan = _solve(s, _restricted(s, after, "mi355x", j))
    assert plan is not None
    priced = float(np.interp(sigma * z, s.tables.grid["mi355x"], response(s, after, plan, "mi355x")))
    key = plan.run("main").candidate
    direct_pp = _remeasured(program_file, "mi355x", math.exp(sigma * z), *sets)
    direct = solve_program(direct_pp, Limits(time_limit=30))
    data = direct.data
    main_w = next(w for w in data.workloads if w.id == "main")
    same = tuple(c for c in main_w.candidates if (c.option, c.quote, c.nodes) == (key.option, key.quote, key.nodes))
    assert same, "the plan's candidate is a candidate of the re-estimated program"
    fixed = replace(data, workloads=tuple(replace(w, candidates=same) if w.id == "main" else w for w in data.workloads))
    outcome, _ = optimise(fixed, Limits(time_limit=30))
    assert outcome.plan is not None
    run = outcome.plan.run("main")
    late = max(0, run.end_day - (date(2027, 7, 15) - TODAY).days)
    assert (late > 0) == (z < 0)
    # the program counts whole days (a run of 92.3 days takes 93); the decision prices a late day pro rata
    whole_day = 50_000 if late > 0 else 0
    assert abs(priced - (outcome.plan.cost_usd + 50_000 * late)) <= 0.005 * priced + whole_day


def test_a_levels_candidates_are_the_re_estimated_ones(program_file: Path) -> None:
    """At each level, main's candidates on MI355X (days, cost) from the single run's cost formulas at the level's
    hours, against the program re-estimated there: the same days, costs within 0.5%."""
    rep = _report(program_file, *CLOSE)
    s = _setting(rep.program, rep.data, "main", Limits(time_limit=30))
    sigma = math.sqrt(A.uncertainty.mfu_sigma.common ** 2 + A.uncertainty.mfu_sigma.software["rocm"] ** 2)
    s.tables.grid["mi355x"] = sigma * GRID_Z
    mine = [c for w in rep.data.workloads if w.id == "main" for c in w.candidates if c.accelerator == "mi355x"]
    for j in (LEVEL_INDEX[0], LEVEL_INDEX[4]):
        theta = math.exp(sigma * GRID_Z[j])
        again = {(c.option, c.quote, c.nodes): c for w in solve_program(
            _remeasured(program_file, "mi355x", theta, *CLOSE), Limits(time_limit=30)).data.workloads
            if w.id == "main" for c in w.candidates}
        compared = 0
        for c in mine:
            other = again.get((c.option, c.quote, c.nodes))
            if other is None:
                continue
            level = s.tables.at_level(c, j)
            assert abs(level.days - other.days) <= 1
            assert level.cost_usd == pytest.approx(other.cost_usd, rel=0.005)
            compared += 1
        assert compared >= 2


def test_the_same_program_gives_the_same_decision_json(program_file: Path) -> None:
    first = to_json(program_dict(_report(program_file, *CLOSE)))
    second = to_json(program_dict(_report(program_file, *CLOSE)))
    assert first == second
    decision = json.loads(first)["program"]["decision"]
    assert set(decision) >= {"value_of_bakeoffs_usd", "standard_error_usd", "platform_shares", "residual_sigma",
                             "scenarios", "bakeoffs"}
    assert [b["id"] for b in decision["bakeoffs"]] == ["bake-b200", "bake-mi355x"]


def test_program_200b_reports_what_its_bakeoffs_are_worth() -> None:
    rep = solve_program(load_program(str(ROOT / "constraints" / "program-200b.yaml"), [], today=TODAY),
                        Limits(time_limit=30))
    d = rep.decision
    assert d is not None and d.workload == "main"
    assert {b for b, _ in d.bakeoffs} == {"bakeoff-b200", "bakeoff-mi355x", "bakeoff-tpu7x"}
    assert d.value_usd == pytest.approx(d.now_usd - d.after_usd, abs=1.0)
    assert d.value_usd == pytest.approx(d.information_usd - d.gate_usd, abs=1.0)
    assert 0 <= d.information_usd <= d.perfect_information_usd
    assert sum(share for _, share in d.shares) == pytest.approx(1.0)
    assert len(d.per_bakeoff) == 3
    body = program_dict(rep)["program"]["decision"]
    assert body["value_of_bakeoffs_usd"] == round(d.value_usd) and body["scenarios"] == A.uncertainty.scenarios
    assert _affected(rep.data, "main") == frozenset({"main", "sft"})
