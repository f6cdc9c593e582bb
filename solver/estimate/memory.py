"""Memory per accelerator: model states + activations + framework overhead, plus headroom.

Conventions:
- Model states use the ZeRO convention, bytes/param from `assumptions.memory.states_bytes_per_param`
  (bf16 AdamW: 2 weights + 2 grads + 12 fp32 master/m/v = 16 B/param), fully sharded across all N ranks
  (ZeRO-3 / FSDP FULL_SHARD, with tensor parallelism inside the node): states/GPU = B·P/N.
- Activations per layer follow Korthikanti et al. 2022 (arXiv 2205.05198, Table 2) with tensor parallelism t
  and sequence parallelism, 16-bit activations, micro-batch b:
    none (FlashAttention: attention scores never stored)  34·s·b·h/t
    none without FlashAttention                           (34 + 5·a·s/h)·s·b·h/t
    selective recompute                                   34·s·b·h/t
    full recompute                                        2·s·b·h/t per layer, plus one layer being recomputed
  plus the output layer 4·s·b·(h+V)/t (Megatron `compute_activation_memory`).
- LoRA/QLoRA: frozen base at 2 (bf16) or ~0.55 (NF4) B/param, sharded across N; adapters r·(d_in+d_out) on
  every linear layer (18·h·r per layer) trained with 16 B/param.
- required = (states + activations + overhead) × (1 + headroom)  ([seed-001]: add 15–30% headroom).
Sizes are decimal GB (1e9 bytes), the unit of the seed's "200B → 400 GB of bf16 weights".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..bisection import least_holding
from ..inputs.assumptions import MemoryA

GB = 1e9


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    vocab: int


def model_shape(params: float, mem: MemoryA, layers: int | None = None, hidden: int | None = None,
                heads: int | None = None, vocab: int | None = None) -> Shape:
    """Transformer shape from P ≈ 12·L·h² when the problem does not give it (h/L from the assumptions)."""
    if hidden is None and layers is None:
        h = (mem.hidden_per_layer * params / 12.0) ** (1.0 / 3.0)
        hidden = max(128, int(round(h / 128.0)) * 128)
    if hidden is None:
        assert layers is not None
        hidden = max(64, int(round(math.sqrt(params / (12.0 * layers)))))
    if layers is None:
        layers = max(1, int(round(params / (12.0 * hidden * hidden))))
    heads = heads or max(1, hidden // mem.head_dim)
    return Shape(layers=layers, hidden=hidden, heads=heads, vocab=vocab or mem.default_vocab)


def tensor_parallel(gpus: int, per_node: int, mem: MemoryA) -> int:
    """Tensor parallelism stays inside a node: t = min(max_tp, GPUs per node, N)."""
    return max(1, min(mem.max_tensor_parallel, per_node, gpus))


def activation_bytes(shape: Shape, seq_len: int, recompute: str, tp: int, micro_batch: int,
                     flash_attention: bool = True) -> float:
    """Activation bytes per GPU for one micro-batch (Korthikanti et al. Table 2, with SP)."""
    s, b, h, L, a = seq_len, micro_batch, shape.hidden, shape.layers, shape.heads
    sbh = float(s) * b * h
    if recompute == "full":
        per_gpu = 2.0 * sbh * L / tp + 34.0 * sbh / tp
    elif recompute == "none" and not flash_attention:
        per_gpu = (34.0 + 5.0 * a * s / h) * sbh * L / tp
    else:
        per_gpu = 34.0 * sbh * L / tp
    logits = 4.0 * s * b * (h + shape.vocab) / tp
    return per_gpu + logits


def adapter_params(shape: Shape, rank: int) -> float:
    """LoRA on every linear layer: attention 4·(h+h)·r, MLP (ffn = 4h) 2·(h+4h)·r → 18·h·r per layer."""
    return 18.0 * shape.hidden * rank * shape.layers


def states_bytes_total(params: float, method: str, optimizer: str, shape: Shape, mem: MemoryA,
                       lora_rank: int | None = None) -> float:
    """Bytes of model states for the whole model before sharding."""
    if method in ("lora", "qlora"):
        base = mem.qlora_base_bytes_per_param if method == "qlora" else mem.lora_base_bytes_per_param
        return base * params + mem.adapter_state_bytes_per_param * adapter_params(shape, lora_rank or mem.lora_rank)
    return mem.states_bytes_per_param[optimizer] * params  # type: ignore[index]


def checkpoint_bytes(params: float, method: str, optimizer: str, shape: Shape, mem: MemoryA,
                     lora_rank: int | None = None) -> float:
    """Bytes of one checkpoint: the model states the memory estimate holds, less the gradients, which a checkpoint
    does not keep — the weights and the optimizer states of what is trained.

    Full training: P × (states_bytes_per_param[optimizer] − gradient_bytes_per_param), 14 B/param for bf16 AdamW
    (2 weights + 12 fp32 master, m, v; ZeRO convention [zero2019]; BLOOM's 2.3 TB for 176B is 13 B/param
    [bloom2022]). LoRA/QLoRA: the adapters only, r·(d_in + d_out) on every linear layer × (adapter_state_bytes −
    gradient bytes): the frozen base is the model the run started from, not written again."""
    if method in ("lora", "qlora"):
        per = mem.adapter_state_bytes_per_param - mem.gradient_bytes_per_param
        return max(0.0, per) * adapter_params(shape, lora_rank or mem.lora_rank)
    per = mem.states_bytes_per_param[optimizer] - mem.gradient_bytes_per_param  # type: ignore[index]
    return max(0.0, per) * params


@dataclass(frozen=True)
class MemoryEstimate:
    gpus: int
    tensor_parallel: int
    recompute: str
    states_gb: float
    activations_gb: float
    overhead_gb: float
    required_gb: float
    available_gb: float

    @property
    def fits(self) -> bool:
        return self.required_gb <= self.available_gb


def memory_per_gpu(*, params: float, gpus: int, per_node: int, available_gb: float, method: str,
                   optimizer: str, seq_len: int, recompute: str, shape: Shape, mem: MemoryA,
                   lora_rank: int | None = None, flash_attention: bool = True) -> MemoryEstimate:
    """Memory one accelerator needs when the job is spread over `gpus` accelerators."""
    return MemoryFitter(recompute=recompute, params=params, per_node=per_node, available_gb=available_gb,
                        method=method, optimizer=optimizer, seq_len=seq_len, shape=shape, mem=mem,
                        lora_rank=lora_rank, flash_attention=flash_attention).at(gpus, recompute)


RECOMPUTE_ORDER = ("none", "selective", "full")
"""Recomputation levels from least to most: each stores less activation memory and executes more FLOPs."""


def levels(requested: str) -> tuple[str, ...]:
    """The levels `requested` allows: `auto` tries all of them, least recomputation first."""
    return RECOMPUTE_ORDER if requested == "auto" else (requested,)


def fit_memory(*, recompute: str, params: float, gpus: int, per_node: int, available_gb: float, method: str,
               optimizer: str, seq_len: int, shape: Shape, mem: MemoryA, lora_rank: int | None = None,
               flash_attention: bool = True) -> MemoryEstimate:
    """Memory per GPU at the recomputation `recompute` asks for; for `auto`, the least recomputation that fits
    (full recomputation costs 8PT instead of 6PT), or the most when none fits. The one place `auto` is decided."""
    return MemoryFitter(recompute=recompute, params=params, per_node=per_node, available_gb=available_gb,
                        method=method, optimizer=optimizer, seq_len=seq_len, shape=shape, mem=mem,
                        lora_rank=lora_rank, flash_attention=flash_attention).fit(gpus)


class MemoryFitter:
    """`memory_per_gpu` and `fit_memory` of one workload on one system, for any number of GPUs: the model states'
    total and each (level, tensor parallelism)'s activations are computed once, not per GPU count — the universe
    asks for every count of a ~230-count node grid on each of ~60 systems. The one implementation of both."""

    def __init__(self, *, recompute: str, params: float, per_node: int, available_gb: float, method: str,
                 optimizer: str, seq_len: int, shape: Shape, mem: MemoryA, lora_rank: int | None = None,
                 flash_attention: bool = True) -> None:
        self.levels = levels(recompute)
        self.per_node = per_node
        self.available_gb = available_gb
        self.seq_len = seq_len
        self.shape = shape
        self.mem = mem
        self.flash_attention = flash_attention
        self.states_total = states_bytes_total(params, method, optimizer, shape, mem, lora_rank)
        self.overhead = mem.framework_overhead_gb * GB
        self._acts: dict[tuple[str, int], float] = {}

    def at(self, gpus: int, level: str) -> MemoryEstimate:
        """Memory one accelerator needs at recomputation `level` with the job spread over `gpus`."""
        mem = self.mem
        tp = tensor_parallel(gpus, self.per_node, mem)
        states = self.states_total / gpus
        acts = self._acts.get((level, tp))
        if acts is None:
            acts = self._acts[(level, tp)] = activation_bytes(self.shape, self.seq_len, level, tp,
                                                              mem.micro_batch_sequences, self.flash_attention)
        overhead = self.overhead
        required = (states + acts + overhead) * (1.0 + mem.headroom)
        return MemoryEstimate(gpus, tp, level, states / GB, acts / GB, overhead / GB, required / GB,
                              self.available_gb)

    def fit(self, gpus: int) -> MemoryEstimate:
        """`fit_memory` at `gpus`: the least recomputation allowed that fits, or the most when none does."""
        est: MemoryEstimate | None = None
        for level in self.levels:
            est = self.at(gpus, level)
            if est.fits:
                return est
        assert est is not None
        return est


def min_gpus(*, params: float, per_node: int, available_gb: float, method: str, optimizer: str, seq_len: int,
             recompute: str, shape: Shape, mem: MemoryA, lora_rank: int | None = None,
             flash_attention: bool = True, limit: int = 10_000_000) -> int | None:
    """Smallest N whose per-GPU requirement fits; memory per GPU never grows with N, so search is monotone."""
    def fits(n: int) -> bool:
        return fit_memory(recompute=recompute, params=params, gpus=n, per_node=per_node, available_gb=available_gb,
                          method=method, optimizer=optimizer, seq_len=seq_len, shape=shape, mem=mem,
                          lora_rank=lora_rank, flash_attention=flash_attention).fits

    if not fits(limit):
        return None
    return least_holding(1, limit, fits)


def capacity_cards(total_bytes: float, memory_gb: float) -> int:
    """Cards needed by raw capacity alone ([seed-000]: 400 GB of bf16 weights ≈ 13 × 32 GB)."""
    return math.ceil(total_bytes / (memory_gb * GB))
