"""Modelling assumptions (MFU, failure rates, porting effort, depreciation …) as a visible, overridable tree.

`catalogs/assumptions.yaml` holds a tree whose leaves are sourced values (`{value, source, as_of}`).
A problem file overrides leaves under `risk:` with plain values at the same path; an unknown path is an
error with a suggestion. The merged values are validated into the typed `Assumptions` model that the
estimators read, and every leaf keeps its provenance for reports (`overridden by problem file`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ..errors import InputError, combined
from . import bundled
from .names import did_you_mean
from .schema import Strict, validate
from .units import parse_quantity
from .yamlsrc import PathT, Source, path_str

Framework = Literal["pytorch", "jax"]


class ScaleOut(Strict):
    """Efficiency of a network class: `intra` for one full node, minus `per_doubling` per doubling of nodes."""

    intra: float = Field(gt=0, le=1)
    per_doubling: float = Field(ge=0, lt=1)
    floor: float = Field(gt=0, le=1)


class Porting(Strict):
    weeks: float = Field(ge=0)
    delay_days: float = Field(ge=0)


class OpsFte(Strict):
    base: float = Field(ge=0)
    per_1000_gpus: float = Field(ge=0)


class MemoryA(Strict):
    headroom: float = Field(ge=0, lt=0.9)
    framework_overhead_gb: float = Field(ge=0)
    micro_batch_sequences: int = Field(ge=1)
    max_tensor_parallel: int = Field(ge=1)
    states_bytes_per_param: dict[Literal["adamw", "adamw_8bit", "sgd_momentum"],
                                 Annotated[float, Field(ge=0, le=1000)]]
    gradient_bytes_per_param: float = Field(ge=0, le=1000)
    """Bytes of the gradients in the model states: what a checkpoint does not keep (`memory.checkpoint_bytes`)."""
    lora_base_bytes_per_param: float = Field(gt=0)
    qlora_base_bytes_per_param: float = Field(gt=0)
    adapter_state_bytes_per_param: float = Field(gt=0)
    lora_rank: int = Field(ge=1)
    hidden_per_layer: float = Field(gt=0)
    head_dim: int = Field(ge=1)
    default_vocab: int = Field(ge=2)


Fraction = Annotated[float, Field(gt=0, le=1)]
Factor = Annotated[float, Field(gt=0, le=10)]


class ComputeA(Strict):
    mfu_base: dict[Literal["cuda", "rocm", "xla", "cerebras", "synapse"], Fraction]
    class_factor: dict[Literal["consumer", "workstation", "datacenter", "tpu", "wafer"], Factor]
    max_mfu: float = Field(gt=0, le=1)
    fp8_factor: float = Field(gt=0, le=1)
    lora_factor: float = Field(gt=0, le=1)
    size_reference_params: float = Field(gt=0)
    size_penalty_per_decade: float = Field(ge=0, lt=1)
    size_floor: float = Field(gt=0, le=1)
    seq_reference: float = Field(gt=0)
    seq_penalty_per_doubling: float = Field(ge=0, lt=1)
    seq_floor: float = Field(gt=0, le=1)


class ReliabilityA(Strict):
    interruptions_per_gpu_hour: dict[Literal["consumer", "workstation", "datacenter", "tpu", "wafer"],
                                     Annotated[float, Field(ge=0)]]
    restart_hours: float = Field(ge=0)
    checkpoint_write_gbps_per_node: float = Field(gt=0)
    max_lost_fraction: float = Field(gt=0, lt=1)
    spot_interruptions_per_node_hour: float = Field(ge=0, le=10)
    hardware_failure_share: float = Field(ge=0, le=1)
    node_replacement_hours: dict[Literal["buy", "cloud", "managed"], Annotated[float, Field(ge=0, le=10_000)]]
    spare_nodes_pct: float = Field(ge=0, le=100)
    """Hot spare nodes kept beside a multi-node job, % of its nodes (`policy.spare_nodes_pct` overrides it)."""


class MoneyA(Strict):
    engineer_usd_per_month: float = Field(ge=0)
    ops_fte: dict[Literal["buy", "cloud", "managed"], OpsFte]
    depreciation_years: float = Field(gt=0)
    residual_fraction: float = Field(ge=0, lt=1)
    network_capex_fraction: float = Field(ge=0)
    consumer_risk_pct: float = Field(ge=0)
    estimate_price_risk_pct: float = Field(ge=0)
    delay_cost_usd_per_day: float = Field(ge=0)
    ops_min_days: float = Field(ge=0)
    cloud_min_billed_hours: float = Field(ge=0)
    engineer_hours_per_month: float = Field(gt=0, le=744)
    engineer_hours_per_failure: float = Field(ge=0, le=10_000)
    orchestration_usd_per_node_month: float = Field(ge=0, le=1_000_000)
    facility_usd_per_kw_month: float = Field(ge=0, le=100_000)
    cost_of_capital_pct_per_year: float = Field(ge=0, le=100)
    support_pct_per_year: float = Field(ge=0, le=100)
    deposit_pct: float = Field(ge=0, le=100)
    """Share of a purchase paid at order (%); the rest is due `payment_terms_days` after delivery
    (`estimate/payments.py`); a quote's own `deposit_pct` replaces it."""
    payment_terms_days: float = Field(ge=0, le=365)
    resale_value_by_age_years: dict[Annotated[float, Field(ge=0, le=100)], Annotated[float, Field(ge=0, le=1)]]

    @model_validator(mode="after")
    def _resale_curve(self) -> "MoneyA":
        curve = sorted(self.resale_value_by_age_years.items())
        if not curve or curve[0][0] != 0:
            raise ValueError("resale_value_by_age_years needs an entry at age 0 (years)")
        if any(age < 0 for age, _ in curve) or any(not 0 <= v <= 1 for _, v in curve):
            raise ValueError("resale_value_by_age_years maps ages >= 0 (years) to fractions of the price in [0, 1]")
        if any(b[1] > a[1] for a, b in zip(curve, curve[1:], strict=False)):
            raise ValueError("resale_value_by_age_years must not rise with age")
        return self


ProviderClass = Literal["hyperscaler", "gpu_cloud", "owned"]
"""Whose storage and transfer rates a plan pays: a hyperscaler's, a GPU cloud's (every other rented vendor), or your
own (bought hardware); `data.provider_class` maps vendors to the first two."""


class DataA(Strict):
    """What a run stores and moves, and at which rates (`estimate/checkpoints.py`)."""

    checkpoints_kept: float = Field(ge=0, le=10_000)
    dataset_bytes_per_token: float = Field(ge=0, le=1000)
    provider_class: dict[str, Literal["hyperscaler", "gpu_cloud"]] = Field(max_length=1000)
    storage_usd_per_tb_month: dict[ProviderClass, Annotated[float, Field(ge=0, le=1_000_000)]]
    egress_usd_per_gb: dict[ProviderClass, Annotated[float, Field(ge=0, le=1000)]]
    ingress_usd_per_gb: dict[ProviderClass, Annotated[float, Field(ge=0, le=1000)]]
    dataset_source_egress_usd_per_gb: float = Field(ge=0, le=1000)


Sigma = Annotated[float, Field(ge=0, le=3)]
MAX_SCENARIOS = 200_000
"""Most scenarios one evaluation may draw: each plan evaluated holds a few arrays of this length, and a chance
constraint one per candidate point and quote, so the count is bounded by the memory it takes: about 5 kB a
scenario, about 1 GB at this bound (measured: bench/README.md, "Timings that used to live in docstrings (moved
2026-12-07)"). The chosen plans of every example are the same at 10,000 and 100,000 (`bench/stability.py`): twice
that is room enough."""


class MfuSigma(Strict):
    """Spread (σ of the logarithm) of achieved MFU around the estimate, which is its median: a part common to every
    platform (how far the workload's real efficiency is from the model) and parts by software stack and hardware
    class (how immature the platform is). Independent parts add in quadrature."""

    common: Sigma
    software: dict[Literal["cuda", "rocm", "xla", "cerebras", "synapse"], Sigma]
    accel_class: dict[Literal["consumer", "workstation", "datacenter", "tpu", "wafer"], Sigma]


class BakeoffResidual(Strict):
    """What a bake-off (a scaled-down run on a platform) leaves unknown of the full run's MFU there: σ of
    ln(the full run's real ÷ modelled MFU) less the bake-off's measured ln(real ÷ modelled), in two independent
    parts — one shared by every bake-off of the same scaled-down model (the model's size and scale-out correction
    from the small run to the large one), one of each platform's own (`estimate/program_decision.py`)."""

    common: Sigma
    platform: Sigma


class MfuCentre(Strict):
    """The calibrated centre of achieved MFU (`compute.calibration_factor`): ln(real ÷ modelled MFU) =
    intercept + ln(b ÷ balance_ref) · (per_log_balance + per_log_balance_log_params · ln(P ÷ params_ref)), b the
    accelerator's dense BF16 FLOPs per byte of memory bandwidth and P the parameters, each clamped to the range of the
    runs it was fitted on (no extrapolation)."""

    intercept: float = Field(ge=-1, le=1)
    per_log_balance: float = Field(ge=-3, le=3)
    per_log_balance_log_params: float = Field(ge=-3, le=3)
    balance_ref: float = Field(gt=0, le=10_000)
    balance_min: float = Field(gt=0, le=10_000)
    balance_max: float = Field(gt=0, le=10_000)
    params_ref: float = Field(gt=0, le=1e14)
    params_min: float = Field(gt=0, le=1e14)
    params_max: float = Field(gt=0, le=1e14)
    classes: list[Literal["consumer", "workstation", "datacenter", "tpu", "wafer"]] = Field(max_length=5)
    """The accelerator classes it applies to: those whose balance of compute to memory bandwidth is of the fitted
    chips' kind (the others keep their own centre, `compute.class_factor`)."""

    @model_validator(mode="after")
    def _range(self) -> "MfuCentre":
        if self.balance_min > self.balance_max:
            raise ValueError(f"balance_min ({self.balance_min:g}) is above balance_max ({self.balance_max:g})")
        return self


class UncertaintyA(Strict):
    scenarios: int = Field(ge=100, le=MAX_SCENARIOS)
    seed: int = Field(ge=0, le=2**63 - 1)
    mfu_sigma: MfuSigma
    mfu_centre: MfuCentre
    measured_mfu_sigma: Sigma
    """σ of log MFU on a platform the user measured (`workload.measured_mfu`): what a measurement at a smaller scale
    leaves unknown of the full run."""
    bakeoff_residual_sigma: BakeoffResidual
    """What a bake-off leaves unknown of the gated run's MFU on its platform (`program.decision`)."""
    porting_delay_sigma: Sigma
    estimate_price_sigma: Sigma
    aversion: float = Field(ge=0.0, le=1.0)
    """ω of the mean–CVaR objective (`estimate/scenarios.py`: `tail_premium`); 0: risk-neutral."""


MAX_GRID_COUNTS = 1000
"""Most node counts one option may be evaluated at. Every count is a point with its own memory, time and cost
estimates (and CP-SAT literals), so the grid is bounded by the work it creates, checked before any of it is done:
the bundled grid has 232 counts; a million would exhaust memory long before an answer."""


class NodeGrid(Strict):
    """Node counts the planner considers: every count up to `fine_until`, then steps (see assumptions.yaml)."""

    fine_until: int = Field(ge=1)
    step_until_512: int = Field(ge=1)
    step_until_max: int = Field(ge=1)
    max_nodes: int = Field(ge=1, le=1_000_000)

    @model_validator(mode="after")
    def _bounded(self) -> "NodeGrid":
        if len(self.counts()) > MAX_GRID_COUNTS:
            raise ValueError(f"this grid has more than {MAX_GRID_COUNTS:,} node counts (every count up to "
                             f"fine_until={self.fine_until}, then steps of {self.step_until_512} to 512 and "
                             f"{self.step_until_max} to max_nodes={self.max_nodes:,}); use larger steps")
        return self

    def counts(self) -> list[int]:
        """The node counts, ascending; stops one past `MAX_GRID_COUNTS` so that a huge grid is never built."""
        counts = list(range(1, min(self.fine_until, self.max_nodes, MAX_GRID_COUNTS + 1) + 1))
        n = counts[-1]
        while n < self.max_nodes and len(counts) <= MAX_GRID_COUNTS:
            step = self.step_until_512 if n < 512 else self.step_until_max
            n = (n // step + 1) * step
            if n <= self.max_nodes:
                counts.append(n)
        return counts


class ProgramA(Strict):
    """How a program (several workloads on one calendar) is modelled: `estimate/program.py`."""

    lot_gpus: int = Field(ge=1, le=1_000_000)
    sizes_per_option: int = Field(ge=2, le=64)


class TcoA(Strict):
    """What a plan's total cost over the horizon reads beyond the cost lines (`estimate/tco.py`)."""

    utilisation_after_run: float = Field(ge=0, le=1)
    """Share of the hours after the run in which bought hardware does work that would otherwise be rented
    (`policy.utilisation_after_run` overrides it)."""
    rental_decline_pct_per_year: float = Field(ge=0, le=90)
    """How fast the rental that work displaces gets cheaper, % a year (compounded)."""


class Assumptions(Strict):
    confidence: Literal["p50", "p90"]
    lead_time_cap_quantile: float = Field(gt=0.9, le=1)
    memory: MemoryA
    compute: ComputeA
    scale_out: dict[str, ScaleOut]
    reliability: ReliabilityA
    max_training_days: float = Field(gt=0, le=36500)
    install_days: dict[Literal["consumer", "workstation", "datacenter", "tpu", "wafer"],
                       Annotated[float, Field(ge=0, le=3650)]]
    porting: dict[Literal["cuda", "rocm", "xla", "cerebras", "synapse"], dict[Framework, Porting]]
    money: MoneyA
    data: DataA
    node_grid: NodeGrid
    uncertainty: UncertaintyA
    program: ProgramA
    tco: TcoA


@dataclass(frozen=True)
class Leaf:
    value: Any
    source: str
    as_of: str
    estimate: bool
    overridden: bool = False


def _is_leaf(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node and "source" in node


def _collect(src: Source, node: Any, path: PathT, out: dict[PathT, Leaf]) -> None:
    if _is_leaf(node):
        extra = set(node) - {"value", "source", "as_of", "estimate"}
        if extra:
            raise src.error(path + (sorted(extra)[0],), "unknown key in a sourced value")
        if "as_of" not in node:
            raise src.error(path, "sourced value needs as_of")
        out[path] = Leaf(node["value"], str(node["source"]), str(node["as_of"]), bool(node.get("estimate", False)))
        return
    if not isinstance(node, dict):
        raise src.error(path, "expected a sourced value {value, source, as_of} or a mapping of them")
    for key, child in node.items():
        _collect(src, child, path + (key,), out)


def _set(tree: dict[str, Any], path: PathT, value: Any) -> None:
    node = tree
    for part in path[:-1]:
        node = node.setdefault(str(part), {})
    node[str(path[-1])] = value


@dataclass(frozen=True)
class AssumptionSet:
    """The merged assumption leaves (with provenance) and the validated typed view the estimators read."""

    leaves: Mapping[PathT, Leaf]
    values: Assumptions

    def overridden(self) -> list[tuple[str, Any]]:
        return [(path_str(p), leaf.value) for p, leaf in sorted(self.leaves.items(), key=lambda kv: kv[0])
                if leaf.overridden]


def _same_key(key: Any) -> Any:
    """A mapping key as an override and the catalog are compared: numbers by value (age 1 is the catalog's '1')."""
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return float(key)
    try:
        return float(key)
    except (TypeError, ValueError):
        return key


def _apply_override(leaves: dict[PathT, Leaf], src: Source | None, override: Any, path: PathT,
                    base: PathT, found: list[InputError]) -> None:
    """Apply `override` at `path` to `leaves`; every mistake in it (an unknown key or assumption, a value that is
    not a number) is added to `found`, and the rest is still applied."""
    if path in leaves:
        old = leaves[path]
        try:
            value = _coerce(old.value, override, src, base + path)
        except InputError as exc:
            found.append(exc)
            return
        if isinstance(old.value, dict) and isinstance(override, dict):
            known = {_same_key(k): k for k in old.value}
            unknown = sorted((k for k in override if _same_key(k) not in known), key=str)
            found += [_err(src, base + path + (k,), f"unknown key '{k}'"
                           + did_you_mean(str(k), [str(o) for o in old.value], listing=True)) for k in unknown]
            if unknown:
                return
            value = {**old.value, **{known[_same_key(k)]: v for k, v in value.items()}}
        where = src.where(base + path) if src is not None else "what-if"
        leaves[path] = Leaf(value, f"overridden: {where}", "", False, True)
        return
    if not any(p[: len(path)] == path for p in leaves):
        parent = path[:-1]
        siblings = sorted({str(p[len(parent)]) for p in leaves if p[: len(parent)] == parent and len(p) > len(parent)})
        key = str(path[-1]) if path else ""
        found.append(_err(src, base + path, f"unknown assumption '{key}'"
                          + did_you_mean(key, siblings, listing=True)))
        return
    if not isinstance(override, dict):
        found.append(_err(src, base + path, "expected a mapping of assumptions to override here"))
        return
    for key, child in override.items():
        _apply_override(leaves, src, child, path + (key,), base, found)


MAX_OVERRIDE = 1e12
"""Largest magnitude an assumption override may have: beyond it every derived figure is meaningless, and money
computed from it could not be represented in the integer model."""


def _coerce(old: Any, new: Any, src: Source | None, path: PathT) -> Any:
    """Let overrides use the problem file's units (`50k`) where the assumption is a number."""
    if isinstance(old, (int, float)) and not isinstance(old, bool) and isinstance(new, (str, int, float)) \
            and not isinstance(new, bool):
        try:
            value = parse_quantity(new, "50k")
        except ValueError as exc:
            raise _err(src, path, str(exc)) from None
        if abs(value) > MAX_OVERRIDE:
            raise _err(src, path, f"{value:g} is absurdly large for an assumption (limit {MAX_OVERRIDE:.0e})")
        return value
    if isinstance(old, dict) and isinstance(new, dict):
        return {k: _coerce(old.get(k), v, src, path + (k,)) for k, v in new.items()}
    return new


def _err(src: Source | None, path: PathT, msg: str) -> InputError:
    if src is None:
        return InputError(msg, path=path_str(path))
    return src.error(path, msg)


_BUNDLED: tuple[Source, Mapping[PathT, Leaf]] | None = None


def bundled_leaves() -> tuple[Source, Mapping[PathT, Leaf]]:
    """The bundled assumption file and its leaves, read once per process (the file ships with the package and
    every what-if of a problem starts from it)."""
    global _BUNDLED
    if _BUNDLED is None:
        asrc = bundled.load("assumptions.yaml")
        if not isinstance(asrc.data, dict) or set(asrc.data) != {"assumptions"}:
            raise asrc.error((), "expected a single top-level key 'assumptions'")
        leaves: dict[PathT, Leaf] = {}
        _collect(asrc, asrc.data["assumptions"], (), leaves)
        _BUNDLED = (asrc, MappingProxyType(leaves))
    return _BUNDLED


def load_assumptions(override: Mapping[str, Any] | None = None, *, src: Source | None = None,
                     base: PathT = ("risk",)) -> AssumptionSet:
    """Bundled assumptions with the problem file's `risk:` overrides applied and validated; errors in an override
    name its line in `src` (or the `--set` that gave it)."""
    asrc, bundled_map = bundled_leaves()
    leaves = dict(bundled_map)
    if override:
        found: list[InputError] = []
        _apply_override(leaves, src, dict(override), (), base, found)
        if found:
            raise combined(found)
    tree: dict[str, Any] = {}
    for path, leaf in leaves.items():
        _set(tree, path, leaf.value)
    if src is not None and override:
        values = validate(Assumptions, src, tree, base=base)
    else:
        values = validate(Assumptions, asrc, tree, base=("assumptions",))
    return AssumptionSet(MappingProxyType(leaves), values)
