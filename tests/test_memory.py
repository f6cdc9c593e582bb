"""Tests for solver/memory.py: model states (ZeRO), Korthikanti activations, headroom, min_gpus, model shape.

Every expected value is computed by hand from the formula in the memory.py docstring and written out as
arithmetic. Tests that pin a formula use their own MemoryA (`MEM`) so they survive tuning of the bundled
assumptions; tests that check the bundled figures read them from `A`.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.inputs.assumptions import load_assumptions
from solver.inputs.catalog import load_catalog
from solver.estimate.calculator import EstimateInput, run_estimate
from solver.estimate.memory import (
    RECOMPUTE_ORDER,
    MemoryEstimate,
    Shape,
    activation_bytes,
    adapter_params,
    capacity_cards,
    checkpoint_bytes,
    fit_memory,
    memory_per_gpu,
    min_gpus,
    model_shape,
    states_bytes_total,
    tensor_parallel,
)

A = load_assumptions().values
CAT = load_catalog([])

# A pinned memory model, independent of the bundled numbers.
MEM = A.memory.model_copy(update={
    "headroom": 0.25,
    "framework_overhead_gb": 3.0,
    "micro_batch_sequences": 1,
    "max_tensor_parallel": 8,
    "states_bytes_per_param": {"adamw": 16.0, "adamw_8bit": 10.0, "sgd_momentum": 12.0},
    "lora_base_bytes_per_param": 2.0,
    "qlora_base_bytes_per_param": 0.55,
    "adapter_state_bytes_per_param": 16.0,
    "lora_rank": 16,
    "hidden_per_layer": 128.0,
    "head_dim": 128,
    "default_vocab": 128256,
})

# A small shape for activation arithmetic, and a 70B-like shape (Llama-2/3 70B: 80 layers, h = 8192).
SMALL = Shape(layers=4, hidden=1024, heads=8, vocab=32000)
S70 = Shape(layers=80, hidden=8192, heads=64, vocab=128256)


def _mem(n: int, **kw) -> MemoryEstimate:
    args = dict(params=70e9, gpus=n, per_node=8, available_gb=80.0, method="pretrain", optimizer="adamw",
                seq_len=4096, recompute="selective", shape=S70, mem=MEM)
    args.update(kw)
    return memory_per_gpu(**args)


# ---------------------------------------------------------------------------------------------- seed 000 figures


def test_seed000_bf16_weights_on_rtx5090_and_rtx_pro_6000():
    # 200B parameters × 2 bytes (bf16) = 400 GB of weights
    weights = 2 * 200e9
    assert weights / 1e9 == 400
    # 400 GB / 32 GB = 12.5 -> 13 RTX 5090; 400 GB / 96 GB = 4.17 -> 5 RTX PRO 6000
    assert capacity_cards(weights, 32) == 13
    assert capacity_cards(weights, 96) == 5
    assert capacity_cards(weights, CAT.accelerators["rtx-5090"].memory_gb.value) == 13
    assert capacity_cards(weights, CAT.accelerators["rtx-pro-6000"].memory_gb.value) == 5


def test_seed000_full_training_states_need_100_cards():
    # weights 2 + grads 2 + AdamW fp32 master/m/v 12 = 16 B/param -> 16 × 200e9 = 3.2e12 B = 3.2 TB
    states = (2 + 2 + 12) * 200e9
    assert states == 3.2e12
    assert capacity_cards(states, 32) == 100      # 3200 GB / 32 GB = 100 exactly, no extra card


def test_capacity_cards_rounds_up_only_past_an_exact_fit():
    assert capacity_cards(3 * 32e9, 32) == 3
    assert capacity_cards(3 * 32e9 + 1, 32) == 4
    assert capacity_cards(1, 80) == 1


def test_estimate_reports_seed000_capacity_cards():
    r = run_estimate(EstimateInput(accelerator="rtx-5090", gpus=4, params=200e9, tokens=4e12), CAT, A)
    assert r["capacity_cards"]["weights_bf16"] == 13                       # 400 GB / 32 GB
    bpp = A.memory.states_bytes_per_param["adamw"]
    assert r["capacity_cards"]["model_states"] == math.ceil(bpp * 200e9 / (32 * 1e9))
    if bpp == 16:
        assert r["capacity_cards"]["model_states"] == 100


# ---------------------------------------------------------------------------------------------- model states


@pytest.mark.parametrize("n", [1, 7, 8, 64, 1000])
def test_states_are_fully_sharded_over_all_gpus(n):
    est = _mem(n)
    assert est.states_gb == pytest.approx(16 * 70e9 / n / 1e9, rel=1e-12)


@pytest.mark.parametrize("optimizer", ["adamw", "adamw_8bit", "sgd_momentum"])
def test_states_bytes_per_param_follow_the_assumptions(optimizer):
    shape = model_shape(7e9, A.memory)
    total = states_bytes_total(7e9, "pretrain", optimizer, shape, A.memory)
    assert total == pytest.approx(A.memory.states_bytes_per_param[optimizer] * 7e9)


def test_bundled_states_convention_is_zero_16_bytes():
    # memory.py docstring: bf16 AdamW = 2 + 2 + 12 = 16 B/param (ZeRO paper convention)
    assert A.memory.states_bytes_per_param["adamw"] == 2 + 2 + 12


def test_lora_and_qlora_states():
    r = 16
    adapters = 18 * 8192 * r * 80                      # 18·h·r per layer × L
    assert adapter_params(S70, r) == adapters
    # QLoRA: 0.55 B/param NF4 base + adapters at 16 B/param
    assert states_bytes_total(70e9, "qlora", "adamw", S70, MEM, r) == pytest.approx(0.55 * 70e9 + 16 * adapters)
    # LoRA: bf16 base at 2 B/param
    assert states_bytes_total(70e9, "lora", "adamw", S70, MEM, r) == pytest.approx(2 * 70e9 + 16 * adapters)
    # rank defaults to mem.lora_rank (16 in MEM); rank 64 has 4× the adapters
    assert states_bytes_total(70e9, "qlora", "adamw", S70, MEM) == pytest.approx(0.55 * 70e9 + 16 * adapters)
    assert states_bytes_total(70e9, "qlora", "adamw", S70, MEM, 64) == pytest.approx(0.55 * 70e9 + 16 * 4 * adapters)


def test_lora_states_use_pinned_coefficients():
    mem = MEM.model_copy(update={"qlora_base_bytes_per_param": 0.5, "adapter_state_bytes_per_param": 12.0,
                                 "lora_rank": 8})
    adapters = 18 * 8192 * 8 * 80
    assert states_bytes_total(70e9, "qlora", "adamw", S70, mem) == pytest.approx(0.5 * 70e9 + 12 * adapters)


def test_lora_states_with_bundled_assumptions():
    m = A.memory
    r = m.lora_rank
    expected = m.qlora_base_bytes_per_param * 70e9 + m.adapter_state_bytes_per_param * 18 * 8192 * r * 80
    assert states_bytes_total(70e9, "qlora", "adamw", S70, m) == pytest.approx(expected)


def test_lora_states_are_sharded_in_memory_per_gpu():
    adapters = 18 * 8192 * 16 * 80
    est = _mem(4, method="lora", lora_rank=16)
    assert est.states_gb == pytest.approx((2 * 70e9 + 16 * adapters) / 4 / 1e9)


# ---------------------------------------------------------------------------------------------- activations


def test_activations_selective_recompute():
    # 34·s·b·h/t per layer × L, plus logits 4·s·b·(h+V)/t; s=2048, b=1, h=1024, L=4, t=2, V=32000
    expected = 34 * 2048 * 1 * 1024 * 4 / 2 + 4 * 2048 * 1 * (1024 + 32000) / 2
    assert activation_bytes(SMALL, 2048, "selective", 2, 1) == pytest.approx(expected, rel=1e-12)


def test_activations_none_with_flash_attention_equals_selective():
    expected = 34 * 2048 * 1024 * 4 / 2 + 4 * 2048 * (1024 + 32000) / 2
    assert activation_bytes(SMALL, 2048, "none", 2, 1, flash_attention=True) == pytest.approx(expected)


def test_activations_none_without_flash_attention_stores_scores():
    # (34 + 5·a·s/h)·s·b·h/t per layer; a=8, s=2048, h=1024 -> 34 + 5·8·2048/1024 = 34 + 80 = 114
    expected = (34 + 5 * 8 * 2048 / 1024) * 2048 * 1024 * 4 / 2 + 4 * 2048 * (1024 + 32000) / 2
    assert activation_bytes(SMALL, 2048, "none", 2, 1, flash_attention=False) == pytest.approx(expected)
    # flash_attention only matters when nothing is recomputed
    sel = 34 * 2048 * 1024 * 4 / 2 + 4 * 2048 * (1024 + 32000) / 2
    assert activation_bytes(SMALL, 2048, "selective", 2, 1, flash_attention=False) == pytest.approx(sel)


def test_activations_full_recompute():
    # 2·s·b·h/t per layer (inputs only) + one layer being recomputed 34·s·b·h/t + logits
    expected = 2 * 2048 * 1024 * 4 / 2 + 34 * 2048 * 1024 / 2 + 4 * 2048 * (1024 + 32000) / 2
    assert activation_bytes(SMALL, 2048, "full", 2, 1) == pytest.approx(expected)
    assert activation_bytes(SMALL, 2048, "full", 2, 1, flash_attention=False) == pytest.approx(expected)


def test_activations_scale_with_micro_batch_and_tensor_parallel():
    one = activation_bytes(SMALL, 2048, "selective", 1, 1)
    assert activation_bytes(SMALL, 2048, "selective", 1, 3) == pytest.approx(3 * one)
    assert activation_bytes(SMALL, 2048, "selective", 4, 1) == pytest.approx(one / 4)


def test_activations_order_of_recompute_levels():
    none_nofa = activation_bytes(S70, 4096, "none", 8, 1, flash_attention=False)
    sel = activation_bytes(S70, 4096, "selective", 8, 1)
    full = activation_bytes(S70, 4096, "full", 8, 1)
    assert none_nofa > sel > full


def test_memory_per_gpu_activations_use_micro_batch_from_assumptions():
    mem = MEM.model_copy(update={"micro_batch_sequences": 2})
    est = memory_per_gpu(params=1e9, gpus=2, per_node=2, available_gb=80, method="pretrain", optimizer="adamw",
                         seq_len=2048, recompute="selective", shape=SMALL, mem=mem)
    expected = (34 * 2048 * 2 * 1024 * 4 / 2 + 4 * 2048 * 2 * (1024 + 32000) / 2) / 1e9
    assert est.activations_gb == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------- tensor parallel


@pytest.mark.parametrize("gpus, per_node, expected", [
    (64, 8, 8),     # full 8-GPU nodes: TP8
    (64, 4, 4),     # 4-GPU boxes: TP4, never across the scale-out network
    (1, 8, 1),      # a single GPU
    (2, 8, 2),      # fewer GPUs than a node
    (64, 72, 8),    # NVL72: capped by max_tensor_parallel = 8
    (64, 1, 1),     # one GPU per node: no TP
])
def test_tensor_parallel_caps(gpus, per_node, expected):
    assert tensor_parallel(gpus, per_node, MEM) == expected


def test_tensor_parallel_cap_is_read_from_assumptions():
    assert tensor_parallel(64, 8, MEM.model_copy(update={"max_tensor_parallel": 4})) == 4
    assert tensor_parallel(1024, 72, A.memory) == min(A.memory.max_tensor_parallel, 72)


def test_memory_per_gpu_uses_capped_tp_for_activations():
    est = _mem(144, per_node=72)
    assert est.tensor_parallel == 8
    expected = (34 * 4096 * 8192 * 80 / 8 + 4 * 4096 * (8192 + 128256) / 8) / 1e9
    assert est.activations_gb == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------- headroom / total


def test_required_is_sum_times_headroom():
    est = _mem(16)
    states = 16 * 70e9 / 16 / 1e9
    acts = (34 * 4096 * 8192 * 80 / 8 + 4 * 4096 * (8192 + 128256) / 8) / 1e9
    overhead = 3.0
    assert est.overhead_gb == overhead
    assert est.required_gb == pytest.approx((states + acts + overhead) * (1 + 0.25))
    assert est.available_gb == 80.0
    assert est.fits == ((states + acts + overhead) * 1.25 <= 80.0)


def test_headroom_multiplies():
    no_headroom = _mem(16, mem=MEM.model_copy(update={"headroom": 0.0}))
    h30 = _mem(16, mem=MEM.model_copy(update={"headroom": 0.30}))
    assert h30.required_gb == pytest.approx(no_headroom.required_gb * 1.30)


def test_bundled_headroom_and_overhead_are_applied():
    est = memory_per_gpu(params=70e9, gpus=16, per_node=8, available_gb=80.0, method="pretrain", optimizer="adamw",
                         seq_len=4096, recompute="selective", shape=S70, mem=A.memory)
    m = A.memory
    states = m.states_bytes_per_param["adamw"] * 70e9 / 16 / 1e9
    t = min(m.max_tensor_parallel, 8, 16)
    b = m.micro_batch_sequences
    acts = (34 * 4096 * b * 8192 * 80 / t + 4 * 4096 * b * (8192 + 128256) / t) / 1e9
    assert est.required_gb == pytest.approx((states + acts + m.framework_overhead_gb) * (1 + m.headroom))


def test_fits_boundary_is_inclusive():
    est = MemoryEstimate(gpus=1, tensor_parallel=1, recompute="full", states_gb=1, activations_gb=1,
                         overhead_gb=1, required_gb=80.0, available_gb=80.0)
    assert est.fits
    over = MemoryEstimate(1, 1, "full", 1, 1, 1, 80.0 + 1e-9, 80.0)
    assert not over.fits


# ---------------------------------------------------------------------------------------------- min_gpus


def test_min_gpus_hand_computed():
    # per GPU: (16·P/N + acts(t=8) + 3 GB)·1.25 <= 80 GB  ->  16·P/N <= 80/1.25 − 3 − acts
    acts_gb = (34 * 4096 * 8192 * 80 / 8 + 4 * 4096 * (8192 + 128256) / 8) / 1e9   # ≈ 11.69 GB
    budget_gb = 80 / 1.25 - 3 - acts_gb                                            # ≈ 49.31 GB
    expected = math.ceil(16 * 70e9 / 1e9 / budget_gb)                              # 1120 / 49.31 -> 23
    assert expected == 23
    n = min_gpus(params=70e9, per_node=8, available_gb=80.0, method="pretrain", optimizer="adamw", seq_len=4096,
                 recompute="selective", shape=S70, mem=MEM)
    assert n == expected
    assert _mem(n).fits
    assert not _mem(n - 1).fits


def test_min_gpus_matches_brute_force():
    kw = dict(params=13e9, per_node=4, available_gb=32.0, method="pretrain", optimizer="adamw", seq_len=2048,
              recompute="selective", shape=Shape(layers=40, hidden=5120, heads=40, vocab=32000), mem=MEM)
    brute = next(n for n in range(1, 10_000) if memory_per_gpu(gpus=n, **kw).fits)
    assert min_gpus(**kw) == brute
    assert brute > 1


def test_min_gpus_auto_picks_cheapest_level_that_fits():
    # at 32K tokens selective activations alone are 34·32768·8192·80/8 B ≈ 91 GB: only full recompute fits
    kw = dict(params=70e9, per_node=8, available_gb=80.0, method="pretrain", optimizer="adamw", seq_len=32768,
              shape=S70, mem=MEM)
    assert 34 * 32768 * 8192 * 80 / 8 / 1e9 > 80
    assert min_gpus(recompute="selective", **kw) is None
    assert min_gpus(recompute="none", **kw) is None
    full_acts_gb = (2 * 32768 * 8192 * 80 / 8 + 34 * 32768 * 8192 / 8 + 4 * 32768 * (8192 + 128256) / 8) / 1e9
    expected = math.ceil(16 * 70e9 / 1e9 / (80 / 1.25 - 3 - full_acts_gb))          # 1120 / 52.25 -> 22
    assert expected == 22
    assert min_gpus(recompute="full", **kw) == expected
    assert min_gpus(recompute="auto", **kw) == expected


def test_min_gpus_auto_is_min_over_levels():
    kw = dict(params=70e9, per_node=8, available_gb=80.0, method="pretrain", optimizer="adamw", seq_len=8192,
              shape=S70, mem=MEM)
    per_level = [min_gpus(recompute=lv, **kw) for lv in RECOMPUTE_ORDER]
    assert min_gpus(recompute="auto", **kw) == min(n for n in per_level if n is not None)


def test_min_gpus_none_when_activations_alone_do_not_fit():
    n = min_gpus(params=70e9, per_node=8, available_gb=80.0, method="pretrain", optimizer="adamw", seq_len=131072,
                 recompute="selective", shape=S70, mem=MEM)
    assert n is None


def test_min_gpus_qlora_70b_fits_on_one_80gb_gpu_with_full_recompute():
    adapters = 18 * 8192 * 16 * 80
    states_gb = (0.55 * 70e9 + 16 * adapters) / 1e9
    acts_gb = (2 * 4096 * 8192 * 80 + 34 * 4096 * 8192 + 4 * 4096 * (8192 + 128256)) / 1e9   # t = 1
    assert (states_gb + acts_gb + 3) * 1.25 <= 80                                            # ≈ 66.6 GB
    assert min_gpus(params=70e9, per_node=8, available_gb=80.0, method="qlora", optimizer="adamw", seq_len=4096,
                    recompute="full", shape=S70, mem=MEM, lora_rank=16) == 1


def test_fit_memory_auto_takes_the_least_recomputation_that_fits():
    # 70B on 64 GPUs at 4K: states 16·70e9/64 = 17.5 GB; selective (= none with FlashAttention) activations
    # 34·4096·8192·80/8 B = 11.4 GB plus logits: fits in 80 GB, so `auto` keeps "none" (no extra FLOPs)
    kw = dict(params=70e9, gpus=64, per_node=8, available_gb=80.0, method="pretrain", optimizer="adamw",
              seq_len=4096, shape=S70, mem=MEM)
    none_gb = (16 * 70e9 / 64 + 34 * 4096 * 8192 * 80 / 8 + 4 * 4096 * (8192 + 128256) / 8) / 1e9 + 3
    assert none_gb * 1.25 <= 80
    assert fit_memory(recompute="auto", **kw).recompute == "none"
    # at 32K on 22 GPUs only full recomputation fits (see test_min_gpus_auto_picks_cheapest_level_that_fits)
    kw32 = {**kw, "gpus": 22, "seq_len": 32768}
    got = fit_memory(recompute="auto", **kw32)
    assert got.recompute == "full" and got.fits
    # nothing fits on 8 GPUs: `auto` reports the most recomputation, and it does not fit
    worst = fit_memory(recompute="auto", **{**kw32, "gpus": 8})
    assert worst.recompute == "full" and not worst.fits
    # an explicit level is kept even when it does not fit
    assert fit_memory(recompute="selective", **kw32).recompute == "selective"
    assert not fit_memory(recompute="selective", **kw32).fits


def test_model_shape_layers_from_given_hidden():
    # Llama 3.1 405B: h = 16384 -> L = round(405.85e9 / (12 · 16384²)) = round(125.99) = 126
    shape = model_shape(405.85e9, MEM, hidden=16384)
    assert shape.hidden == 16384
    assert shape.layers == round(405.85e9 / (12 * 16384 ** 2)) == 126
    assert shape.heads == 16384 // 128


def test_model_shape_hidden_from_given_layers():
    shape = model_shape(405.85e9, MEM, layers=126)
    assert shape.layers == 126
    assert shape.hidden == round(math.sqrt(405.85e9 / (12 * 126)))    # ≈ 16384
    assert abs(shape.hidden - 16384) <= 2


def test_model_shape_from_params_only():
    # P = 12·L·h² with h/L = 128  ->  h = (128·P/12)^(1/3), rounded to a multiple of 128
    h_raw = (128 * 175e9 / 12) ** (1 / 3)                 # ≈ 12311
    hidden = round(h_raw / 128) * 128                      # 96 × 128 = 12288 (GPT-3 175B)
    layers = round(175e9 / (12 * hidden ** 2))             # 175e9 / 1.812e9 ≈ 96.6 -> 97
    shape = model_shape(175e9, MEM)
    assert (shape.hidden, shape.layers) == (hidden, layers) == (12288, 97)
    assert shape.heads == 12288 // 128
    assert shape.vocab == MEM.default_vocab


def test_model_shape_rounds_hidden_to_nearest_multiple_of_128():
    # seed 000's 200B model: h = (128 · 200e9 / 12)^(1/3) ≈ 12872 = 100.56 × 128 -> 101 × 128 = 12928
    h_raw = (128 * 200e9 / 12) ** (1 / 3)
    assert 100.5 < h_raw / 128 < 101
    shape = model_shape(200e9, MEM)
    assert shape.hidden == 101 * 128
    assert shape.layers == round(200e9 / (12 * 12928 ** 2)) == 100      # 200e9 / 2.0056e9 ≈ 99.7


def test_model_shape_uses_hidden_per_layer_assumption():
    mem = MEM.model_copy(update={"hidden_per_layer": 64.0})
    h_raw = (64 * 175e9 / 12) ** (1 / 3)                   # ≈ 9771
    shape = model_shape(175e9, mem)
    assert shape.hidden == round(h_raw / 128) * 128 == 9728
    assert shape.layers == round(175e9 / (12 * 9728 ** 2))


def test_model_shape_explicit_heads_and_vocab_pass_through():
    shape = model_shape(7e9, MEM, layers=32, hidden=4096, heads=32, vocab=32000)
    assert shape == Shape(layers=32, hidden=4096, heads=32, vocab=32000)


def test_model_shape_tiny_model_floors():
    shape = model_shape(1e3, MEM)
    assert shape.hidden == 128          # floor of the derived hidden size
    assert shape.layers == 1            # at least one layer


def test_model_shape_recovers_params_approximately():
    for p in (7e9, 70e9, 405e9):
        s = model_shape(p, MEM)
        assert 12 * s.layers * s.hidden ** 2 == pytest.approx(p, rel=0.1)
        assert s.hidden / s.layers == pytest.approx(128, rel=0.2)


# ---------------------------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None, database=None)
@given(params=st.floats(min_value=1e8, max_value=2e12),
       per_node=st.sampled_from([1, 2, 4, 8, 72]),
       n=st.integers(min_value=1, max_value=5000),
       seq=st.sampled_from([512, 2048, 8192, 32768]),
       recompute=st.sampled_from(RECOMPUTE_ORDER),
       method=st.sampled_from(["pretrain", "lora", "qlora"]),
       flash=st.booleans())
def test_memory_per_gpu_never_increases_with_n(params, per_node, n, seq, recompute, method, flash):
    shape = model_shape(params, MEM)
    kw = dict(params=params, per_node=per_node, available_gb=80.0, method=method, optimizer="adamw", seq_len=seq,
              recompute=recompute, shape=shape, mem=MEM, flash_attention=flash)
    a = memory_per_gpu(gpus=n, **kw).required_gb
    b = memory_per_gpu(gpus=n + 1, **kw).required_gb
    c = memory_per_gpu(gpus=2 * n, **kw).required_gb
    assert b <= a * (1 + 1e-12)
    assert c <= a * (1 + 1e-12)


@settings(max_examples=40, deadline=None, database=None)
@given(params=st.floats(min_value=1e9, max_value=3e10),
       per_node=st.sampled_from([1, 4, 8]),
       avail=st.sampled_from([24.0, 32.0, 80.0]),
       recompute=st.sampled_from(["none", "selective", "full", "auto"]))
def test_min_gpus_is_the_first_fitting_n(params, per_node, avail, recompute):
    shape = model_shape(params, MEM)
    kw = dict(params=params, per_node=per_node, available_gb=avail, method="pretrain", optimizer="adamw",
              seq_len=2048, shape=shape, mem=MEM)
    levels = RECOMPUTE_ORDER if recompute == "auto" else (recompute,)

    def fits(n):
        return any(memory_per_gpu(gpus=n, recompute=lv, **kw).fits for lv in levels)

    n = min_gpus(recompute=recompute, limit=512, **kw)
    brute = next((k for k in range(1, 513) if fits(k)), None)
    assert n == brute


@pytest.mark.parametrize(("example", "sets"), [("datacenter", []), ("datacenter", ["workload.recompute=auto"]),
                                               ("lora-small", [])])
def test_one_estimator_per_system_gives_every_count_what_a_fresh_one_gives(example: str, sets: list[str]) -> None:
    """The universe estimates each system's whole node grid with one `PointEstimator` (activations and FLOPs kept
    per level and tensor parallelism); asked in a shuffled order, each count gets exactly, float for float, what a
    new estimator made for that count alone gives."""
    import random
    from pathlib import Path

    from solver.estimate.memory import model_shape
    from solver.estimate.options import PointEstimator, workload_utilisation
    from solver.inputs.problem import load_problem

    p = load_problem(Path(__file__).resolve().parent.parent / "constraints" / f"{example}.yaml", sets)
    spec, a, cat = p.spec, p.assumptions.values, p.catalog
    levels = set()
    w = spec.workload
    shape = model_shape(w.params, a.memory, w.layers, w.hidden, w.heads, w.vocab)
    counts = a.node_grid.counts()
    rng = random.Random(7)
    for system in sorted(cat.systems.values(), key=lambda s: s.id):
        accel = cat.accelerators[system.accelerator]
        util = workload_utilisation(spec, a, accel, 1.0)
        for preemptible in (False, True):
            shared = PointEstimator(spec, a, shape, system, accel, util, 1e12, preemptible)
            for n in rng.sample(counts, len(counts)):
                got = shared.at(n)
                assert got == PointEstimator(spec, a, shape, system, accel, util, 1e12, preemptible).at(n)
                levels.add(got[0].recompute)
    assert len(levels) > 1 or w.recompute != "auto", "auto recomputation never changed level across the counts"


def test_one_memory_fitter_gives_every_gpu_count_what_memory_per_gpu_gives() -> None:
    """Below a node's GPUs, tensor parallelism changes with the count: a fitter asked in a shuffled order keeps
    each (level, tensor parallelism)'s activations apart."""
    import random

    from solver.estimate.memory import MemoryFitter
    a = load_assumptions().values
    shape = model_shape(70e9, a.memory)
    counts = list(range(1, 65))
    random.Random(3).shuffle(counts)
    for level in ("none", "selective", "full"):
        fitter = MemoryFitter(recompute=level, params=70e9, per_node=8, available_gb=80.0, method="full",
                              optimizer="adamw", seq_len=8192, shape=shape, mem=a.memory)
        for gpus in counts:
            assert fitter.at(gpus, level) == memory_per_gpu(
                params=70e9, gpus=gpus, per_node=8, available_gb=80.0, method="full", optimizer="adamw",
                seq_len=8192, recompute=level, shape=shape, mem=a.memory)


def test_a_checkpoint_is_the_model_states_without_the_gradients():
    """Weights + optimizer states: 16 − 2 = 14 B/param for bf16 AdamW (BLOOM: 2.3 TB for 176B), 10 − 2 for 8-bit
    Adam; a LoRA run writes its adapters only (18·h·r per layer × 14 B)."""
    shape = Shape(layers=32, hidden=4096, heads=32, vocab=128256)
    mem = A.memory
    assert checkpoint_bytes(200e9, "pretrain", "adamw", shape, mem) == pytest.approx(200e9 * 14)
    assert checkpoint_bytes(7e9, "full_finetune", "adamw_8bit", shape, mem) == pytest.approx(7e9 * 8)
    assert checkpoint_bytes(7e9, "lora", "adamw", shape, mem, 16) == pytest.approx(18 * 4096 * 16 * 32 * 14)
