"""Training compute and wall time: FLOPs, achieved utilisation, scale-out efficiency, failure overhead.

Formulas:
- Executed FLOPs: 6·P·T for training (Kaplan/Chinchilla, forward 2PT + backward 4PT) plus the attention
  term 12·L·h·s per token (llm-foundry / PaLM MFU convention); ×4/3 with full recompute (one extra forward,
  the NeMo / llm-analysis 8·P·T). LoRA/QLoRA skip the weight-gradient GEMMs of the frozen base: ≈ 4·P·T
  (derivation: forward 2PT + activation-gradient backward 2PT; no published source states it).
- Utilisation u = mfu_base[software] · class_factor · size(P) · seq(s) · fp8_factor · lora_factor · rules;
  size(P) = max(floor, 1 − penalty·log10(P_ref/P)), seq(s) = max(floor, 1 − penalty·log2(s/s_ref)).
- Scale-out efficiency by network class: intra for a full multi-GPU node, × (1 − per_doubling·log2 nodes),
  floored. Consumer PCIe boxes lose badly across nodes by construction (assumptions.scale_out).
- Ideal hours = FLOPs / (N · peak · u · eff).
- Failures: interruptions arrive at λ = rate·N per hour (+ reclaims per node-hour × nodes on spot capacity);
  checkpoints cost δ hours; the Young/Daly interval τ = √(2·δ/λ); each interruption loses restart R + τ/2.
  Wall = ideal·(1 + δ/τ) / (1 − λ·(R + τ/2)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..inputs.assumptions import Assumptions, ComputeA, ScaleOut

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

    @property
    def value(self) -> float:
        """The product of the factors, capped (`compute.max_mfu`: no stack sustains its dense peak)."""
        return min(self.cap, self.base * self.class_factor * self.size * self.seq * self.precision * self.method
                   * self.rules)


def utilisation(*, software: str, accel_class: str, params: float, seq_len: int, precision: str,
                has_fp8: bool, method: str, c: ComputeA, rule_factor: float = 1.0) -> Utilisation:
    """Achieved fraction of the dense peak (MFU; with full recompute the same fraction of executed FLOPs)."""
    fp8 = c.fp8_factor if (precision == "fp8" and has_fp8) else 1.0
    return Utilisation(base=c.mfu_base[software], class_factor=c.class_factor[accel_class],  # type: ignore[index]
                       size=size_factor(params, c), seq=seq_factor(seq_len, c), precision=fp8,
                       method=c.lora_factor if method in LORA_METHODS else 1.0, rules=rule_factor, cap=c.max_mfu)


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

    @property
    def days(self) -> float:
        return self.wall_hours / 24.0


def wall_time(*, flops: float, gpus: int, nodes: int, peak_tflops: float, utilisation: float, efficiency: float,
              interruptions_per_gpu_hour: float, restart_hours: float, checkpoint_bytes: float,
              write_gbps_per_node: float, reclaims_per_node_hour: float = 0.0) -> TimeEstimate | None:
    """Ideal and expected wall-clock hours; None when failures would eat the run (λ·(R+τ/2) ≥ 1)."""
    throughput = gpus * peak_tflops * 1e12 * utilisation * efficiency
    ideal = flops / throughput / 3600.0
    lam = interruptions_per_gpu_hour * gpus + reclaims_per_node_hour * nodes
    delta = checkpoint_bytes / (write_gbps_per_node * 1e9 * nodes) / 3600.0
    if lam <= 0:
        return TimeEstimate(flops, utilisation, efficiency, ideal, ideal, 0.0, math.inf, 0.0)
    tau = math.sqrt(2.0 * delta / lam) if delta > 0 else 0.0
    lost = lam * (restart_hours + tau / 2.0)
    if lost >= 1.0:
        return None
    overhead = (1.0 + (delta / tau if tau > 0 else 0.0)) / (1.0 - lost)
    wall = ideal * overhead
    return TimeEstimate(flops, utilisation, efficiency, ideal, wall, lam * wall, tau, 1.0 - 1.0 / overhead)


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
