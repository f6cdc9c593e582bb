"""`plan estimate`: the estimators as a calculator, without a problem file or a solve.

It picks the system that carries the accelerator (the largest node that the GPU count fills, else the
smallest), so per-node tensor parallelism and the network class match what would be bought or rented.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..inputs.assumptions import Assumptions
from ..inputs.catalog import Catalog, System
from ..inputs.names import did_you_mean
from ..inputs.units import parse_quantity
from .compute import TimeEstimate, accel_calibration, estimate_time, training_flops, utilisation
from .memory import capacity_cards, checkpoint_bytes, fit_memory, min_gpus, model_shape, states_bytes_total
from .scenarios import quantile, wall_hours
from .uncertainty import Draws, mfu_factor, mfu_sigma


@dataclass
class EstimateInput:
    accelerator: str
    gpus: int
    params: float
    tokens: float
    seq_len: int = 4096
    method: str = "pretrain"
    precision: str = "bf16"
    optimizer: str = "adamw"
    recompute: str = "selective"
    system: str | None = None
    layers: int | None = None
    hidden: int | None = None
    lora_rank: int | None = None
    measured_mfu: float | None = None
    """MFU the user measured on the accelerator: replaces the model's; the band narrows (`mfu_factor`)."""


def parse_count(value: str, option: str, example: str) -> float:
    """A positive count from the command line (`70B`, `15T`); errors name the option."""
    try:
        x = parse_quantity(value, example)
    except ValueError as exc:
        raise InputError(str(exc), origin=option) from None
    if x <= 0:
        raise InputError(f"expected a positive number like {example}", origin=option)
    return x


def pick_system(cat: Catalog, accelerator: str, gpus: int, system: str | None = None) -> System:
    if accelerator not in cat.accelerators:
        raise InputError(f"unknown accelerator '{accelerator}'" + did_you_mean(accelerator, cat.accelerators),
                         origin="--accelerator")
    candidates = sorted((s for s in cat.systems.values() if s.accelerator == accelerator),
                        key=lambda s: (s.per_node, s.id))
    if system is not None:
        if system not in cat.systems or cat.systems[system].accelerator != accelerator:
            raise InputError(f"system '{system}' does not carry {accelerator} "
                             f"(systems: {', '.join(s.id for s in candidates) or 'none'})", origin="--system")
        return cat.systems[system]
    if not candidates:
        raise InputError(f"no system in the catalog carries {accelerator}", origin="--accelerator")
    filled = [s for s in candidates if s.per_node <= gpus and gpus % s.per_node == 0]
    return filled[-1] if filled else candidates[0]


def run_estimate(inp: EstimateInput, cat: Catalog, a: Assumptions) -> dict[str, Any]:
    system = pick_system(cat, inp.accelerator, inp.gpus, inp.system)
    accel = cat.accelerators[system.accelerator]
    if inp.gpus < 1:
        raise InputError("expected at least 1 GPU", origin="--gpus")
    nodes = math.ceil(inp.gpus / system.per_node)
    shape = model_shape(inp.params, a.memory, inp.layers, inp.hidden)
    mem = fit_memory(recompute=inp.recompute, params=inp.params, gpus=inp.gpus, per_node=system.per_node,
                     available_gb=float(accel.memory_gb.value), method=inp.method, optimizer=inp.optimizer,
                     seq_len=inp.seq_len, shape=shape, mem=a.memory, lora_rank=inp.lora_rank)
    mg = min_gpus(params=inp.params, per_node=system.per_node, available_gb=float(accel.memory_gb.value),
                  method=inp.method, optimizer=inp.optimizer, seq_len=inp.seq_len, recompute=inp.recompute,
                  shape=shape, mem=a.memory, lora_rank=inp.lora_rank)
    util = utilisation(software=accel.software, accel_class=accel.cls, params=inp.params, seq_len=inp.seq_len,
                       precision=inp.precision, has_fp8=accel.fp8_tflops.value is not None, method=inp.method,
                       c=a.compute, calibration=accel_calibration(a.uncertainty.mfu_centre, accel, inp.params),
                       measured=inp.measured_mfu)
    flops = training_flops(inp.params, inp.tokens, inp.method, mem.recompute, shape.layers, shape.hidden, inp.seq_len)
    t = estimate_time(a=a, flops=flops, gpus=inp.gpus, nodes=nodes, per_node=system.per_node, network=system.network,
                      peak_tflops=accel.peak_tflops(inp.precision), util=util.value, accel_class=accel.cls,
                      checkpoint_bytes=checkpoint_bytes(inp.params, inp.method, inp.optimizer, shape, a.memory,
                                                        inp.lora_rank))
    states_total = states_bytes_total(inp.params, inp.method, inp.optimizer, shape, a.memory, inp.lora_rank)
    band = _band(t, a, accel.software, accel.cls, inp.gpus, inp.measured_mfu is not None) if t else {}
    return {
        "accelerator": accel.id, "system": system.id, "gpus": inp.gpus, "nodes": nodes,
        "shape": {"layers": shape.layers, "hidden": shape.hidden, "heads": shape.heads},
        "memory_per_gpu_gb": {"required": round(mem.required_gb, 2), "available": float(accel.memory_gb.value),
                              "states": round(mem.states_gb, 2), "activations": round(mem.activations_gb, 2),
                              "overhead": round(mem.overhead_gb, 2)},
        "recompute": mem.recompute, "tensor_parallel": mem.tensor_parallel, "fits": mem.fits, "min_gpus": mg,
        "capacity_cards": {"weights_bf16": capacity_cards(2.0 * inp.params, float(accel.memory_gb.value)),
                           "model_states": capacity_cards(states_total, float(accel.memory_gb.value))},
        "flops": float(f"{flops:.6e}"), "mfu": round(util.value, 4),
        "mfu_factors": {"base": util.base, "class": util.class_factor, "size": round(util.size, 4),
                        "seq": round(util.seq, 4), "precision": util.precision, "method": util.method,
                        "calibration": round(util.calibration, 4),
                        **({"measured": util.measured} if util.measured is not None else {})},
        "scale_out_efficiency": round(t.efficiency, 4) if t else None,
        "gpu_hours": round(t.wall_hours * inp.gpus, 0) if t else None,
        "gpu_hours_ideal": round(t.ideal_hours * inp.gpus, 0) if t else None,
        "days": round(t.days, 2) if t else None,
        "expected_interruptions": round(t.interruptions, 1) if t else None,
        "workable": t is not None,
        **band,
    }


def _band(t: TimeEstimate, a: Assumptions, software: str, accel_class: str, gpus: int,
          measured: bool = False) -> dict[str, Any]:
    """The P10-P90 band of GPU-hours and days over the uncertainty model's scenarios (MFU spread and
    interruptions; `uncertainty.py`): the point estimate above is at the median MFU."""
    draws = Draws(a.uncertainty.seed, a.uncertainty.scenarios)
    wall = wall_hours(t, a.reliability.restart_hours, mfu_factor(draws, a, software, accel_class, measured),
                      draws.normal("interruptions"))
    out: dict[str, Any] = {"mfu_sigma": round(mfu_sigma(a, software, accel_class, measured), 4),
                           "scenarios": draws.n}
    for q in (10, 50, 90):
        w = quantile(wall, q / 100)
        out[f"gpu_hours_p{q}"] = round(w * gpus, 0)
        out[f"days_p{q}"] = round(w / 24.0, 2)
    return out
