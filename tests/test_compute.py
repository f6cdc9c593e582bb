"""Tests for solver/compute.py: FLOPs, utilisation factors, scale-out efficiency, Young/Daly wall time.

Every expected value is computed by hand from the formulas in the compute.py docstring and written out as
arithmetic. Formula tests use their own ComputeA / ScaleOut (`C`, `NET`); catalog tests read `A` and the
bundled systems.
"""

from __future__ import annotations

import math

import pytest

from solver.inputs.assumptions import ScaleOut, load_assumptions
from solver.inputs.catalog import load_catalog
from solver.estimate.compute import (
    Utilisation,
    estimate_time,
    scale_out_efficiency,
    seq_factor,
    size_factor,
    training_flops,
    lost_per_interruption,
    utilisation,
    wall_time,
    young_daly_interval,
)
from solver.estimate.calculator import EstimateInput, run_estimate

A = load_assumptions().values
CAT = load_catalog([])

C = A.compute.model_copy(update={
    "mfu_base": {"cuda": 0.5, "rocm": 0.4, "xla": 0.45, "cerebras": 0.3, "synapse": 0.33},
    "class_factor": {"consumer": 0.8, "workstation": 0.9, "datacenter": 1.0, "tpu": 1.0, "wafer": 1.0},
    "fp8_factor": 0.75,
    "lora_factor": 0.7,
    "size_reference_params": 1e11,
    "size_penalty_per_decade": 0.1,
    "size_floor": 0.5,
    "seq_reference": 4096,
    "seq_penalty_per_doubling": 0.1,
    "seq_floor": 0.7,
})
NET = ScaleOut(intra=0.8, per_doubling=0.1, floor=0.3)


# ---------------------------------------------------------------------------------------------- FLOPs

P, T, L, H, S = 70e9, 2e12, 80, 8192, 4096


def test_training_flops_pretrain():
    # (6·P + 12·L·h·s)·T
    expected = (6 * 70e9 + 12 * 80 * 8192 * 4096) * 2e12
    assert training_flops(P, T, "pretrain", "selective", L, H, S) == pytest.approx(expected, rel=1e-12)
    assert training_flops(P, T, "pretrain", "none", L, H, S) == pytest.approx(expected, rel=1e-12)


def test_training_flops_full_recompute_adds_one_forward():
    # + (2·P + 4·L·h·s)·T  ->  (8·P + 16·L·h·s)·T
    expected = (6 * 70e9 + 12 * 80 * 8192 * 4096 + 2 * 70e9 + 4 * 80 * 8192 * 4096) * 2e12
    assert training_flops(P, T, "pretrain", "full", L, H, S) == pytest.approx(expected, rel=1e-12)
    # exactly 4/3 of the no-recompute count
    assert training_flops(P, T, "pretrain", "full", L, H, S) == pytest.approx(
        4 / 3 * training_flops(P, T, "pretrain", "none", L, H, S), rel=1e-12)


@pytest.mark.parametrize("method", ["lora", "qlora"])
def test_training_flops_lora(method):
    # (4·P + 8·L·h·s)·T: no weight-gradient GEMMs for the frozen base
    expected = (4 * 70e9 + 8 * 80 * 8192 * 4096) * 2e12
    assert training_flops(P, T, method, "selective", L, H, S) == pytest.approx(expected, rel=1e-12)
    expected_full = (4 * 70e9 + 8 * 80 * 8192 * 4096 + 2 * 70e9 + 4 * 80 * 8192 * 4096) * 2e12
    assert training_flops(P, T, method, "full", L, H, S) == pytest.approx(expected_full, rel=1e-12)


def test_training_flops_is_about_6pt_for_short_sequences():
    # the attention term 12·L·h·s is small next to 6·P at s = 128: 12·80·8192·128 / (6·70e9) ≈ 0.24%
    flops = training_flops(P, T, "pretrain", "selective", L, H, 128)
    assert flops == pytest.approx(6 * 70e9 * 2e12, rel=0.003)
    assert flops > 6 * 70e9 * 2e12


def test_estimate_uses_full_recompute_flops_for_bloom():
    # BLOOM 176B: L = 70, h = 14336, s = 2048, T = 366e9, full recompute -> (8·P + 16·L·h·s)·T
    r = run_estimate(EstimateInput(accelerator="a100-80gb", gpus=384, params=176.2e9, tokens=366e9, seq_len=2048,
                                   recompute="full", layers=70, hidden=14336), CAT, A)
    expected = (8 * 176.2e9 + 16 * 70 * 14336 * 2048) * 366e9
    assert r["flops"] == pytest.approx(expected, rel=1e-6)   # the report rounds to 7 significant digits


# ---------------------------------------------------------------------------------------------- size / seq factors


@pytest.mark.parametrize("params, expected", [
    (1e11, 1.0),                         # at the reference
    (4.62e11, 1.0),                      # saturated above the reference (no bonus)
    (1e10, 1 - 0.1 * 1),                 # one decade below
    (1e9, 1 - 0.1 * 2),                  # two decades
    (125e6, 1 - 0.1 * math.log10(1e11 / 125e6)),
    (1e6, 0.5),                          # 1 − 0.1·5 = 0.5 = floor exactly
    (1e4, 0.5),                          # 1 − 0.1·7 = 0.3 -> floor 0.5
])
def test_size_factor(params, expected):
    assert size_factor(params, C) == pytest.approx(expected, rel=1e-12)


def test_size_factor_with_bundled_assumptions():
    c = A.compute
    p = c.size_reference_params / 100
    assert size_factor(p, c) == pytest.approx(max(c.size_floor, 1 - c.size_penalty_per_decade * 2))
    assert size_factor(c.size_reference_params * 10, c) == 1.0


@pytest.mark.parametrize("seq, expected", [
    (512, 1.0),                 # shorter than the reference: no bonus
    (3072, 1.0),                # just below the reference: still no bonus (log2 < 0 must not raise it)
    (4096, 1.0),                # at the reference
    (8192, 1 - 0.1 * 1),        # one doubling
    (16384, 1 - 0.1 * 2),
    (6144, 1 - 0.1 * math.log2(6144 / 4096)),
    (32768, 0.7),               # 1 − 0.1·3 = 0.7 = floor
    (131072, 0.7),              # 1 − 0.1·5 = 0.5 -> floor 0.7
])
def test_seq_factor(seq, expected):
    assert seq_factor(seq, C) == pytest.approx(expected, rel=1e-12)


def test_seq_factor_with_bundled_assumptions():
    c = A.compute
    s = int(c.seq_reference * 4)
    assert seq_factor(s, c) == pytest.approx(max(c.seq_floor, 1 - c.seq_penalty_per_doubling * 2))
    assert seq_factor(int(c.seq_reference), c) == 1.0


# ---------------------------------------------------------------------------------------------- utilisation


def test_utilisation_multiplies_all_factors():
    u = utilisation(software="cuda", accel_class="consumer", params=1e10, seq_len=8192, precision="fp8",
                    has_fp8=True, method="lora", c=C, rule_factor=0.9)
    # base 0.5 × consumer 0.8 × size (1 − 0.1) × seq (1 − 0.1) × fp8 0.75 × lora 0.7 × rules 0.9
    expected = 0.5 * 0.8 * 0.9 * 0.9 * 0.75 * 0.7 * 0.9
    assert u.value == pytest.approx(expected, rel=1e-12)
    assert (u.base, u.class_factor, u.precision, u.method, u.rules) == (0.5, 0.8, 0.75, 0.7, 0.9)
    assert u.size == pytest.approx(0.9)
    assert u.seq == pytest.approx(0.9)


def test_fp8_factor_only_when_chip_has_fp8():
    kw = dict(software="cuda", accel_class="datacenter", params=1e11, seq_len=4096, method="pretrain", c=C)
    assert utilisation(precision="fp8", has_fp8=True, **kw).value == pytest.approx(0.5 * 0.75)
    assert utilisation(precision="fp8", has_fp8=False, **kw).value == pytest.approx(0.5)   # BF16 fallback
    assert utilisation(precision="bf16", has_fp8=True, **kw).value == pytest.approx(0.5)


def test_fp8_factor_in_estimate_follows_catalog():
    # RTX 3090 (Ampere) has fp8_tflops null -> no FP8 factor; RTX 4090 (Ada) has FP8
    assert CAT.accelerators["rtx-3090"].fp8_tflops.value is None
    assert CAT.accelerators["rtx-4090"].fp8_tflops.value is not None
    for acc, factor in (("rtx-3090", 1.0), ("rtx-4090", A.compute.fp8_factor)):
        r = run_estimate(EstimateInput(accelerator=acc, gpus=4, params=7e9, tokens=1e9, precision="fp8"), CAT, A)
        assert r["mfu_factors"]["precision"] == factor


def test_utilisation_reads_bundled_factors():
    c = A.compute
    u = utilisation(software="rocm", accel_class="workstation", params=c.size_reference_params,
                    seq_len=int(c.seq_reference), precision="bf16", has_fp8=True, method="pretrain", c=c)
    assert u.value == pytest.approx(c.mfu_base["rocm"] * c.class_factor["workstation"])


def test_utilisation_value_is_capped():
    u = Utilisation(base=1.0, class_factor=1.0, size=1.0, seq=1.0, precision=1.0, method=1.0, rules=1.5, cap=0.95)
    assert u.value == 0.95
    assert Utilisation(base=0.5, class_factor=1.0, size=1.0, seq=1.0, precision=1.0, method=1.0, rules=1.5,
                       cap=0.95).value == 0.75


def test_utilisation_cap_is_the_bundled_assumption():
    c = A.compute
    u = utilisation(software="cuda", accel_class="datacenter", params=c.size_reference_params,
                    seq_len=int(c.seq_reference), precision="bf16", has_fp8=True, method="pretrain", c=c,
                    rule_factor=10.0)
    assert u.value == c.max_mfu


# ---------------------------------------------------------------------------------------------- scale-out


def test_scale_out_single_gpu_is_perfect():
    assert scale_out_efficiency(1, 8, 1, NET) == 1.0
    assert scale_out_efficiency(1, 1, 1, ScaleOut(intra=0.5, per_doubling=0.5, floor=0.1)) == 1.0


def test_scale_out_one_full_node_is_intra():
    assert scale_out_efficiency(1, 8, 8, NET) == 0.8


@pytest.mark.parametrize("nodes, expected", [
    (2, 0.8 * (1 - 0.1 * 1)),
    (8, 0.8 * (1 - 0.1 * 3)),
    (64, 0.8 * (1 - 0.1 * 6)),        # 0.32
    (20, 0.8 * (1 - 0.1 * math.log2(20))),   # not a power of two: log2 20 ≈ 4.32
    (128, 0.3),                       # 0.8·(1 − 0.7) = 0.24 -> floor 0.3
    (4096, 0.3),                      # 1 − 1.2 < 0: still the floor, never negative
])
def test_scale_out_multi_node(nodes, expected):
    assert scale_out_efficiency(nodes, 8, 8 * nodes, NET) == pytest.approx(expected, rel=1e-12)


def test_scale_out_one_gpu_per_node_has_no_intra_loss():
    # per_node = 1: no in-box tensor parallelism, only the per-doubling loss
    assert scale_out_efficiency(16, 1, 16, NET) == pytest.approx(1.0 * (1 - 0.1 * 4))


def test_consumer_pcie_loses_badly_across_nodes():
    consumer, dgx = CAT.systems["rtx5090-4x"], CAT.systems["dgx-b200"]
    nc, nd = A.scale_out[consumer.network], A.scale_out[dgx.network]
    eff_c = scale_out_efficiency(64, consumer.per_node, 64 * consumer.per_node, nc)
    eff_d = scale_out_efficiency(64, dgx.per_node, 64 * dgx.per_node, nd)
    # 64 nodes = 6 doublings
    assert eff_c == pytest.approx(max(nc.floor, nc.intra * (1 - nc.per_doubling * 6)))
    assert eff_d == pytest.approx(max(nd.floor, nd.intra * (1 - nd.per_doubling * 6)))
    # with the bundled figures: 0.8·(1 − 0.12·6) = 0.224 vs 1.0·(1 − 0.009·6) = 0.946
    assert eff_c < 0.5 * eff_d
    assert eff_d > 0.9


def test_scale_out_llama_16k_h100():
    # 16,384 H100 = 2,048 DGX nodes = 11 doublings
    net = A.scale_out[CAT.systems["dgx-h100"].network]
    expected = max(net.floor, net.intra * (1 - net.per_doubling * 11))
    assert scale_out_efficiency(2048, 8, 16384, net) == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------- wall time


def _hand_case(**over):
    # 100 GPUs on 10 nodes at 1000 TFLOP/s, u = 0.5, eff = 0.8 -> 4e16 FLOP/s; 1.44e22 FLOPs = 100 h
    # λ = 2.5e-3 × 100 = 0.25 /h; δ = 3.6e13 B / (2 GB/s × 10 nodes) = 1800 s = 0.5 h; R = 0.5 h
    kw = dict(flops=4e16 * 3600 * 100, gpus=100, nodes=10, peak_tflops=1000, utilisation=0.5, efficiency=0.8,
              interruptions_per_gpu_hour=2.5e-3, restart_hours=0.5, checkpoint_bytes=3.6e13,
              write_gbps_per_node=2.0)
    kw.update(over)
    return wall_time(**kw)


def test_wall_time_young_daly_hand_numbers():
    t = _hand_case()
    ideal = 4e16 * 3600 * 100 / (100 * 1000e12 * 0.5 * 0.8) / 3600     # 100 h
    lam = 2.5e-3 * 100                                                 # 0.25 /h: the cluster's MTBF M = 4 h
    delta = 3.6e13 / (2.0e9 * 10) / 3600                               # 0.5 h
    tau = math.sqrt(2 * delta * (1 / lam))                             # Young: √(2·0.5·4) = 2 h
    lost = tau / 2 + delta + 0.5                                       # half an interval + read-back + restart = 2 h
    overhead = (1 + delta / tau) / (1 - lam * lost)                    # 1.25 / 0.5 = 2.5
    assert ideal == pytest.approx(100)
    assert tau == pytest.approx(2.0)
    assert overhead == pytest.approx(2.5)
    assert t is not None
    assert t.ideal_hours == pytest.approx(ideal)
    assert t.checkpoint_interval_hours == pytest.approx(tau)
    assert t.checkpoint_write_hours == pytest.approx(delta) and t.mtbf_hours == pytest.approx(4.0)
    assert t.lost_per_interruption(0.5) == pytest.approx(2.0)
    assert t.wall_hours == pytest.approx(ideal * overhead)             # 250 h
    assert t.interruptions == pytest.approx(lam * ideal * overhead)    # 0.25 × 250 = 62.5
    assert t.lost_fraction == pytest.approx(1 - 1 / overhead)          # 0.6
    assert t.days == pytest.approx(250 / 24)
    assert t.wall_hours / t.ideal_hours == pytest.approx(2.5)
    assert (t.flops, t.utilisation, t.efficiency) == (4e16 * 3600 * 100, 0.5, 0.8)


def test_wall_time_second_hand_case():
    # 1024 GPUs, 128 nodes, 1.97e-5 /GPU-h, R = 0.25 h, 70e9 × 14 B checkpoint at 2 GB/s/node
    t = _hand_case(gpus=1024, nodes=128, interruptions_per_gpu_hour=1.97e-5, restart_hours=0.25,
                   checkpoint_bytes=70e9 * 14, write_gbps_per_node=2.0)
    ideal = 4e16 * 3600 * 100 / (1024 * 1000e12 * 0.5 * 0.8) / 3600
    lam = 1.97e-5 * 1024
    delta = 70e9 * 14 / (2.0e9 * 128) / 3600
    tau = math.sqrt(2 * delta * (1 / lam))
    expected = ideal * (1 + delta / tau) / (1 - lam * (tau / 2 + delta + 0.25))
    assert t.wall_hours == pytest.approx(expected, rel=1e-12)
    assert t.wall_hours > t.ideal_hours


def test_wall_time_none_when_failures_eat_the_run():
    # no checkpoint cost: τ = 0, lost = λ·R; λ = 0.5 /h × R = 2 h = 1.0 -> unworkable
    assert _hand_case(checkpoint_bytes=0, interruptions_per_gpu_hour=5e-3, restart_hours=2.0) is None
    assert _hand_case(checkpoint_bytes=0, interruptions_per_gpu_hour=5e-3, restart_hours=3.0) is None
    # λ·(τ/2 + δ + R) with τ = 2, δ = 0.5: 0.25·(1 + 0.5 + 2.5) = 1.0 -> None
    assert _hand_case(restart_hours=2.5) is None
    assert _hand_case(restart_hours=2.4) is not None


def test_wall_time_just_below_the_limit():
    # λ·R = 0.5 × 1.9 = 0.95 -> overhead 1 / (1 − 0.95) = 20
    t = _hand_case(checkpoint_bytes=0, interruptions_per_gpu_hour=5e-3, restart_hours=1.9)
    assert t is not None
    assert t.wall_hours == pytest.approx(100 * 1 / (1 - 0.5 * 1.9))


def test_wall_time_without_failures_is_ideal():
    t = _hand_case(interruptions_per_gpu_hour=0.0)
    assert t.wall_hours == t.ideal_hours == pytest.approx(100)
    assert t.interruptions == 0.0
    assert t.lost_fraction == 0.0
    assert math.isinf(t.checkpoint_interval_hours)


def test_wall_time_more_nodes_write_checkpoints_faster():
    # δ ∝ 1/nodes, so τ = √(2δM) shrinks and the checkpoint share δ/τ = √(δ/(2M)) falls
    slow = _hand_case(nodes=5)
    fast = _hand_case(nodes=10)
    assert slow.checkpoint_interval_hours == pytest.approx(math.sqrt(2 * (3.6e13 / (2e9 * 5) / 3600) * 4.0))
    assert fast.wall_hours < slow.wall_hours
    # on one node δ = 5 h: each interruption would lose τ/2 + δ + R = 3.2 + 5 + 0.5 h, more than M = 4 h
    assert _hand_case(nodes=1) is None


def test_estimate_time_uses_bundled_network_and_reliability():
    system = CAT.systems["dgx-h100"]
    net = A.scale_out[system.network]
    rel = A.reliability
    nodes, gpus = 64, 512
    mem = A.memory
    flops, peak, util = 1e23, 989.4, 0.4
    ckpt = 70e9 * (mem.states_bytes_per_param["adamw"] - mem.gradient_bytes_per_param)     # 14 B/param
    t = estimate_time(a=A, flops=flops, gpus=gpus, nodes=nodes, per_node=8, network=system.network,
                      peak_tflops=peak, util=util, accel_class="datacenter", checkpoint_bytes=ckpt)
    eff = max(net.floor, net.intra * (1 - net.per_doubling * 6))       # 64 nodes = 6 doublings
    ideal = flops / (gpus * peak * 1e12 * util * eff) / 3600
    lam = rel.interruptions_per_gpu_hour["datacenter"] * gpus
    delta = ckpt / (rel.checkpoint_write_gbps_per_node * 1e9 * nodes) / 3600
    tau = math.sqrt(2 * delta * (1 / lam))
    wall = ideal * (1 + delta / tau) / (1 - lam * (tau / 2 + delta + rel.restart_hours))
    assert ckpt == pytest.approx(70e9 * 14)
    assert t.efficiency == pytest.approx(eff)
    assert t.ideal_hours == pytest.approx(ideal)
    assert t.wall_hours == pytest.approx(wall)


def test_consumer_cluster_is_much_slower_per_gpu_than_datacenter():
    # same job, 64 nodes each: the consumer cluster's scale-out loss and higher failure rate show in GPU-hours
    kw = dict(flops=1e22, nodes=64, peak_tflops=1000, util=0.4, checkpoint_bytes=7e9 * 14, a=A)
    cons = estimate_time(gpus=256, per_node=4, network=CAT.systems["rtx5090-4x"].network, accel_class="consumer", **kw)
    dc = estimate_time(gpus=512, per_node=8, network=CAT.systems["dgx-b200"].network, accel_class="datacenter", **kw)
    assert cons.ideal_hours * 256 > 3 * dc.ideal_hours * 512


def test_young_daly_interval_and_the_loss_per_interruption():
    """Daly's example (FGCS 22(3), 2006): M = 24 h, δ = 5 min gives Young's τ = √(2·δ·M) = 120 min."""
    assert young_daly_interval(5 / 60, 24.0) * 60 == pytest.approx(120.0)
    assert young_daly_interval(0.0, 24.0) == 0.0 and math.isinf(young_daly_interval(0.1, math.inf))
    assert lost_per_interruption(2.0, 0.5, 0.25) == pytest.approx(1.0 + 0.5 + 0.25)
