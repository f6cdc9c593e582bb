"""Training compute and wall time: FLOPs, achieved utilisation, scale-out efficiency, failure overhead.

Formulas:
- Executed FLOPs: 6·P·T for training (Kaplan/Chinchilla, forward 2PT + backward 4PT) plus the attention
  term 12·L·h·s per token (llm-foundry / PaLM MFU convention); ×4/3 with full recompute (one extra forward,
  the NeMo / llm-analysis 8·P·T). LoRA/QLoRA skip the weight-gradient GEMMs of the frozen base: ≈ 4·P·T
  (derivation: forward 2PT + activation-gradient backward 2PT; no published source states it).
- Utilisation u = mfu_base[software] · class_factor · size(P) · seq(s) · fp8_factor · lora_factor · calibration
  · rules; size(P) = max(floor, 1 − penalty·log10(P_ref/P)), seq(s) = max(floor, 1 − penalty·log2(s/s_ref));
  calibration = exp(a + ln(b / b_ref)·(β + γ·ln(P / P_ref))), b the accelerator's dense BF16 FLOPs per byte of
  memory bandwidth and P the parameters, clamped to the fitted ranges (`calibration_factor`, fitted on published
  runs: bench/calibrate.py). A chip whose compute grew faster than its memory bandwidth reaches a smaller share of
  its peak, the more so for a small model (smaller matrices): on the published A100 and H100 runs of
  catalogs/calibration.yaml, H100 (295 FLOPs/byte) runs took longer than the same model gave, A100 (153-201) runs
  less, and Llama 3.1 405B on H100 about as long. It applies to datacenter GPUs and TPUs at their own balance. A user's own measurement on the platform (`workload.measured_mfu`) replaces the
  product before the rules: u = measured · rules.
- Scale-out efficiency by network class: intra for a full multi-GPU node, × (1 − per_doubling·log2 nodes),
  floored. Consumer PCIe boxes lose badly across nodes by construction (assumptions.scale_out).
- Ideal hours = FLOPs / (N · peak · u · eff).
- Failures: interruptions arrive at λ = rate·N per hour (+ reclaims per node-hour × nodes on spot capacity), so
  the cluster's mean time between failures is M = 1/λ = the per-node MTBF ÷ nodes; a checkpoint takes
  δ = size ÷ (write bandwidth per node × nodes) hours to write; it is written every τ = √(2·δ·M) hours of work
  (Young, CACM 17(9), 1974: the interval that minimises the expected waste); each interruption loses
  τ/2 + δ + R (half an interval of work on average, the checkpoint read back or the one being written, and the
  restart R: `reliability.restart_hours`, the flat 15 minutes this model used alone before).
  Wall = ideal·(1 + δ/τ) / (1 − λ·(τ/2 + δ + R)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..inputs.assumptions import Assumptions, ComputeA, MfuCentre, ScaleOut

LORA_METHODS = ("lora", "qlora")


def training_flops(params: float, tokens: float, method: str, recompute: str, layers: int, hidden: int,
                   seq_len: int) -> float:
    """Executed FLOPs for the whole run (see module docstring)."""
    attention_per_token = 12.0 * layers * hidden * seq_len
    if method in LORA_METHODS:
        per_token = 4.0 * params + attention_per_token * 2.0 / 3.0
        recompute_extra = 2.0 * params + attention_per_token / 3.0
    else:
        per_token = 6.0 * params + attention_per_token
        recompute_extra = 2.0 * params + attention_per_token / 3.0
    if recompute == "full":
        per_token += recompute_extra
    return per_token * tokens


def size_factor(params: float, c: ComputeA) -> float:
    if params >= c.size_reference_params:
        return 1.0
    return max(c.size_floor, 1.0 - c.size_penalty_per_decade * math.log10(c.size_reference_params / params))


def seq_factor(seq_len: int, c: ComputeA) -> float:
    if seq_len <= c.seq_reference:
        return 1.0
    return max(c.seq_floor, 1.0 - c.seq_penalty_per_doubling * math.log2(seq_len / c.seq_reference))


def calibration_factor(centre: MfuCentre, accel_class: str, peak_tflops: float | None, memory_tbs: float | None,
                       params: float) -> float:
    """exp(intercept + ln(b / balance_ref) · (per_log_balance + per_log_balance_log_params · ln(P / params_ref)))
    with b = peak TFLOPS / memory TB/s (FLOPs per byte) and P the parameters, each clamped to its fitted range: the
    median of published runs' achieved MFU against the model's, by the chip's balance of compute to memory
    bandwidth — which costs a small model more than a large one (module docstring). 1 for a chip without both
    figures, and for a class of chip it does not apply to (`centre.classes`): its own class factor stands."""
    if not peak_tflops or not memory_tbs or accel_class not in centre.classes:
        return 1.0
    b = min(centre.balance_max, max(centre.balance_min, peak_tflops / memory_tbs))
    p = min(centre.params_max, max(centre.params_min, params))
    slope = centre.per_log_balance + centre.per_log_balance_log_params * math.log(p / centre.params_ref)
    return math.exp(centre.intercept + slope * math.log(b / centre.balance_ref))


def accel_calibration(centre: MfuCentre, accel: Any, params: float) -> float:
    """`calibration_factor` of an accelerator of the catalog (its class, dense BF16 peak and memory bandwidth) for a
    model of `params` parameters."""
    return calibration_factor(centre, accel.cls, accel.bf16_tflops.value, accel.memory_bw_tbs.value, params)


@dataclass(frozen=True)
class Utilisation:
    base: float
    class_factor: float
    size: float
    seq: float
    precision: float
    method: float
    rules: float
    cap: float
    calibration: float = 1.0
    measured: float | None = None
    """The user's own MFU on this platform (`workload.measured_mfu`): it replaces the modelled product."""

    @property
    def value(self) -> float:
        """The product of the factors, capped (`compute.max_mfu`: no stack sustains its dense peak)."""
        if self.measured is not None:
            return min(self.cap, self.measured * self.rules)
        return min(self.cap, self.base * self.class_factor * self.size * self.seq * self.precision * self.method
                   * self.calibration * self.rules)


def utilisation(*, software: str, accel_class: str, params: float, seq_len: int, precision: str,
                has_fp8: bool, method: str, c: ComputeA, rule_factor: float = 1.0, calibration: float = 1.0,
                measured: float | None = None) -> Utilisation:
    """Achieved fraction of the dense peak (MFU; with full recompute the same fraction of executed FLOPs)."""
    fp8 = c.fp8_factor if (precision == "fp8" and has_fp8) else 1.0
    return Utilisation(base=c.mfu_base[software], class_factor=c.class_factor[accel_class],  # type: ignore[index]
                       size=size_factor(params, c), seq=seq_factor(seq_len, c), precision=fp8,
                       method=c.lora_factor if method in LORA_METHODS else 1.0, rules=rule_factor, cap=c.max_mfu,
                       calibration=calibration, measured=measured)


def scale_out_efficiency(nodes: int, per_node: int, gpus: int, net: ScaleOut) -> float:
    """Fraction of single-GPU throughput kept by a cluster of `nodes` nodes (see module docstring)."""
    if gpus <= 1:
        return 1.0
    eff = net.intra if per_node > 1 else 1.0
    if nodes > 1:
        eff *= 1.0 - net.per_doubling * math.log2(nodes)
    return max(net.floor, eff)


@dataclass(frozen=True)
class TimeEstimate:
    flops: float
    utilisation: float
    efficiency: float
    ideal_hours: float
    wall_hours: float
    interruptions: float
    checkpoint_interval_hours: float
    lost_fraction: float
    checkpoint_write_hours: float = 0.0
    """δ: the time to write one checkpoint (size ÷ the nodes' write bandwidth)."""
    checkpoint_bytes: float = 0.0

    @property
    def days(self) -> float:
        return self.wall_hours / 24.0

    @property
    def mtbf_hours(self) -> float:
        """M: the cluster's mean time between interruptions, 1/λ (infinite without interruptions)."""
        return self.wall_hours / self.interruptions if self.interruptions > 0 else math.inf

    def lost_per_interruption(self, restart_hours: float) -> float:
        """Hours one interruption costs this run (`lost_per_interruption`)."""
        tau = self.checkpoint_interval_hours if math.isfinite(self.checkpoint_interval_hours) else 0.0
        return lost_per_interruption(tau, self.checkpoint_write_hours, restart_hours)


def young_daly_interval(write_hours: float, mtbf_hours: float) -> float:
    """τ = √(2·δ·M): the hours of work between checkpoints that minimise the expected waste, for a checkpoint that
    takes δ hours to write and a mean time M between interruptions of the whole job (Young, "A first order
    approximation to the optimum checkpoint interval", CACM 17(9):530–531, 1974; Daly, FGCS 22(3):303–312, 2006
    refines it by less than δ for δ < 2M). 0 without a write time, infinite without interruptions."""
    if write_hours <= 0:
        return 0.0
    if not math.isfinite(mtbf_hours):
        return math.inf
    return math.sqrt(2.0 * write_hours * mtbf_hours)


def lost_per_interruption(interval_hours: float, write_hours: float, restart_hours: float) -> float:
    """τ/2 + δ + R: the hours one interruption costs — on average half an interval of work since the last
    checkpoint, the checkpoint read back at the bandwidth it was written with (or the one being written, lost), and
    the restart R (detect, swap in a spare, relaunch: `reliability.restart_hours`). Daly's waste per interruption
    is (τ + δ)/2 + R (FGCS 22(3), 2006); the extra δ/2 is the read-back."""
    return interval_hours / 2.0 + write_hours + restart_hours


def wall_time(*, flops: float, gpus: int, nodes: int, peak_tflops: float, utilisation: float, efficiency: float,
              interruptions_per_gpu_hour: float, restart_hours: float, checkpoint_bytes: float,
              write_gbps_per_node: float, reclaims_per_node_hour: float = 0.0) -> TimeEstimate | None:
    """Ideal and expected wall-clock hours (module docstring: λ, M = 1/λ, δ, τ = √(2δM), each interruption losing
    τ/2 + δ + R); None when failures would eat the run (λ·(τ/2 + δ + R) ≥ 1)."""
    throughput = gpus * peak_tflops * 1e12 * utilisation * efficiency
    ideal = flops / throughput / 3600.0
    lam = interruptions_per_gpu_hour * gpus + reclaims_per_node_hour * nodes
    delta = checkpoint_bytes / (write_gbps_per_node * 1e9 * nodes) / 3600.0
    if lam <= 0:
        return TimeEstimate(flops, utilisation, efficiency, ideal, ideal, 0.0, math.inf, 0.0, delta, checkpoint_bytes)
    tau = young_daly_interval(delta, 1.0 / lam)
    lost = lam * lost_per_interruption(tau, delta, restart_hours)
    if lost >= 1.0:
        return None
    overhead = (1.0 + (delta / tau if tau > 0 else 0.0)) / (1.0 - lost)
    wall = ideal * overhead
    return TimeEstimate(flops, utilisation, efficiency, ideal, wall, lam * wall, tau, 1.0 - 1.0 / overhead, delta,
                        checkpoint_bytes)


def estimate_time(*, a: Assumptions, flops: float, gpus: int, nodes: int, per_node: int, network: str,
                  peak_tflops: float, util: float, accel_class: str, checkpoint_bytes: float,
                  preemptible: bool = False) -> TimeEstimate | None:
    """Wall time of a system at n nodes; on preemptible (spot) capacity each node is also reclaimed at
    `reliability.spot_interruptions_per_node_hour`."""
    return TimeEstimator(a=a, per_node=per_node, network=network, peak_tflops=peak_tflops, util=util,
                         accel_class=accel_class, checkpoint_bytes=checkpoint_bytes,
                         preemptible=preemptible).at(flops, gpus, nodes)


class TimeEstimator:
    """`estimate_time` of one system at any node count, with what does not depend on the count looked up once
    (the universe asks for every count of the node grid). The one implementation of it."""

    def __init__(self, *, a: Assumptions, per_node: int, network: str, peak_tflops: float, util: float,
                 accel_class: str, checkpoint_bytes: float, preemptible: bool = False) -> None:
        r = a.reliability
        self.per_node = per_node
        self.net = a.scale_out[network]
        self.peak_tflops = peak_tflops
        self.util = util
        self.rate = r.interruptions_per_gpu_hour[accel_class]  # type: ignore[index]
        self.reclaims = r.spot_interruptions_per_node_hour if preemptible else 0.0
        self.restart_hours = r.restart_hours
        self.checkpoint_bytes = checkpoint_bytes
        self.write_gbps = r.checkpoint_write_gbps_per_node

    def at(self, flops: float, gpus: int, nodes: int) -> TimeEstimate | None:
        eff = scale_out_efficiency(nodes, self.per_node, gpus, self.net)
        return wall_time(flops=flops, gpus=gpus, nodes=nodes, peak_tflops=self.peak_tflops, utilisation=self.util,
                         efficiency=eff, interruptions_per_gpu_hour=self.rate, restart_hours=self.restart_hours,
                         checkpoint_bytes=self.checkpoint_bytes, write_gbps_per_node=self.write_gbps,
                         reclaims_per_node_hour=self.reclaims)
