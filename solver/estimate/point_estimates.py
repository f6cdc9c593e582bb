"""Memory per GPU and wall time of a system at a node count, and the per-process cache of them.

They depend on the workload, the assumptions, the system and its accelerator only, not on the mode, prices, site or
limits: kept apart from the pricing of options (options.py), they are shared between the options of a system and
between the what-ifs of a problem that keep its workload and assumptions (`EstimateCache`, `shared_estimates`).
"""

from __future__ import annotations

from ..inputs.assumptions import Assumptions
from ..inputs.catalog import Accelerator, System
from ..inputs.problem import Problem
from ..inputs.spec import ProblemSpec
from .compute import TimeEstimate, TimeEstimator, accel_calibration, training_flops, utilisation
from .memory import MemoryEstimate, MemoryFitter, Shape
from .memo import recent, workload_key


Estimates = dict[tuple[int, float], tuple[MemoryEstimate, "TimeEstimate | None"]]
EstimateCache = dict[tuple[System, Accelerator, bool], Estimates]
"""Memory and time of a system at (node count, rule MFU factor), for one workload and one set of assumptions.
They depend on the system and its accelerator (compared by value), not on the mode, prices, site or limits, so
the options of a system, and every what-if of a problem that keeps its workload and assumptions, share them."""

SHARED_ESTIMATES = 8
"""Workload-and-assumption combinations whose estimates a process keeps (`shared_estimates`): a command's
what-ifs reuse one or two; a test run visits a few dozen problems in turn."""
_SHARED: dict[tuple[str, str], EstimateCache] = {}


def shared_estimates(problem: Problem) -> EstimateCache:
    """The estimate cache for this problem's workload and assumptions, kept per process (least recently used out).

    Estimates are pure functions of the workload, the assumptions, the system, the accelerator and the node
    count; the key holds the first two (as JSON) and the cache's inner key the next two, so a what-if that changes
    prices, quotes, the site, the schedule or the policy reuses every estimate, and one that changes the workload
    or an assumption gets its own."""
    return recent(_SHARED, workload_key(problem), SHARED_ESTIMATES)


def estimate_point(spec: ProblemSpec, a: Assumptions, shape: Shape, system: System, accel: Accelerator, n: int,
                   util: float, ckpt_bytes: float, preemptible: bool = False
                   ) -> tuple[MemoryEstimate, TimeEstimate | None]:
    """Memory (`auto`: the least recomputation that fits) and wall time of a system at n nodes; the time is None
    when the run is unworkable (failures eat more than `max_lost_fraction`, or it exceeds `max_training_days`)."""
    return PointEstimator(spec, a, shape, system, accel, util, ckpt_bytes, preemptible).at(n)


class PointEstimator:
    """`estimate_point` of one system at any node count: the memory fit, the executed FLOPs of each recomputation
    level and the time model are set up once per system (`MemoryFitter`, `TimeEstimator`), not per count — the
    universe estimates every count of the node grid (~230) on every system (~60), a fifth of the bundled
    example's solve when done count by count. The same numbers, operation for operation."""

    def __init__(self, spec: ProblemSpec, a: Assumptions, shape: Shape, system: System, accel: Accelerator,
                 util: float, ckpt_bytes: float, preemptible: bool = False) -> None:
        w = spec.workload
        self.w = w
        self.a = a
        self.shape = shape
        self.per_node = system.per_node
        self.memory = MemoryFitter(recompute=w.recompute, params=w.params, per_node=system.per_node,
                                   available_gb=float(accel.memory_gb.value), method=w.method, optimizer=w.optimizer,
                                   seq_len=w.seq_len, shape=shape, mem=a.memory, lora_rank=w.lora_rank,
                                   flash_attention=w.flash_attention)
        self.time = TimeEstimator(a=a, per_node=system.per_node, network=system.network,
                                  peak_tflops=accel.peak_tflops(w.precision), util=util, accel_class=accel.cls,
                                  checkpoint_bytes=ckpt_bytes, preemptible=preemptible)
        self._flops: dict[str, float] = {}

    def at(self, n: int) -> tuple[MemoryEstimate, TimeEstimate | None]:
        w, a = self.w, self.a
        gpus = n * self.per_node
        mem = self.memory.fit(gpus)
        flops = self._flops.get(mem.recompute)
        if flops is None:
            flops = self._flops[mem.recompute] = training_flops(w.params, w.tokens, w.method, mem.recompute,
                                                                self.shape.layers, self.shape.hidden, w.seq_len)
        t = self.time.at(flops, gpus, n)
        if t is not None and (t.lost_fraction > a.reliability.max_lost_fraction or t.days > a.max_training_days):
            t = None
        return mem, t


def workload_utilisation(spec: ProblemSpec, a: Assumptions, accel: Accelerator, rule_factor: float) -> float:
    """The workload's MFU on the accelerator: modelled and calibrated, or the user's measurement there
    (`compute.utilisation`)."""
    w = spec.workload
    return utilisation(software=accel.software, accel_class=accel.cls, params=w.params, seq_len=w.seq_len,
                       precision=w.precision, has_fp8=accel.fp8_tflops.value is not None, method=w.method,
                       c=a.compute, rule_factor=rule_factor,
                       calibration=accel_calibration(a.uncertainty.mfu_centre, accel, w.params),
                       measured=measured_mfu(spec, accel.id)).value


def measured_mfu(spec: ProblemSpec, accel_id: str) -> float | None:
    """The MFU the user measured on this accelerator (`workload.measured_mfu`), if any."""
    m = spec.workload.measured_mfu
    return None if m is None else m.get(accel_id)
