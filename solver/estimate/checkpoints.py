"""What a run stores and moves, and what its checkpoints cost: the pure estimators behind the `storage` and
`data_transfer` lines and the plan's checkpoint figures.

[seed-001] budgets a training run by the cost of a *successful checkpoint*: GPU-hours + storage and snapshots + data
egress/ingress + orchestration and observability + engineers' time recovering failed runs (the lines of
`cost.py`). Here:

- checkpoint size C = the model states less the gradients (`memory.checkpoint_bytes`: 14 B/param for AdamW);
- stored: `data.checkpoints_kept` × C + the dataset, tokens × `data.dataset_bytes_per_token`, held for the run's
  months at the provider class's `data.storage_usd_per_tb_month` (a hyperscaler's or a GPU cloud's file storage,
  your own parallel file system for bought hardware);
- moved: the dataset in (its source's egress, `data.dataset_source_egress_usd_per_gb`, + the provider's ingress)
  and the kept checkpoints out at the end (the provider's egress: 0 where it charges none), per GB of 1e9 bytes;
- the plan's checkpoint figures: δ (write time), M (the cluster's MTBF), τ = √(2δM) (Young/Daly, `compute.py`),
  the successful checkpoints of the run — one per τ hours of useful work, ideal hours ÷ τ — and the plan's total
  cost per successful checkpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..inputs.assumptions import DataA, ProviderClass
from ..inputs.units import HOURS_PER_MONTH
from .compute import TimeEstimate

TB = 1e12
GB = 1e9


def provider_class(mode: str, vendor: str, data: DataA) -> ProviderClass:
    """The rates a quote pays: `owned` for bought hardware, else the class of the first `data.provider_class`
    vendor its vendor starts with (`AWS (3-year Reserved Instance)` is AWS's), `gpu_cloud` for any other."""
    if mode == "buy":
        return "owned"
    for name, cls in sorted(data.provider_class.items()):
        if vendor == name or vendor.startswith(name + " ") or vendor.startswith(name + "("):
            return cls
    return "gpu_cloud"


@dataclass(frozen=True)
class RunData:
    """What a run keeps and moves, in TB (1e12 bytes)."""

    checkpoint_tb: float
    kept: float
    dataset_tb: float

    @property
    def stored_tb(self) -> float:
        """Kept checkpoints + the dataset."""
        return self.checkpoint_tb * self.kept + self.dataset_tb

    @property
    def exported_tb(self) -> float:
        """What leaves the provider at the end: the kept checkpoints (the last holds the final weights)."""
        return self.checkpoint_tb * self.kept


def run_data(checkpoint_bytes: float, tokens: float, data: DataA) -> RunData:
    """A run's checkpoint, kept checkpoints and dataset (module docstring)."""
    return RunData(checkpoint_bytes / TB, data.checkpoints_kept, tokens * data.dataset_bytes_per_token / TB)


@dataclass(frozen=True)
class DataCost:
    """A plan's storage (dollars per hour of run) and transfers (dollars, once) at one provider class."""

    storage_usd_per_hour: float
    transfer_usd: float

    def per_node(self, nodes: int) -> "DataCost":
        """The share of one of `nodes` nodes: a plan's nodes from several quotes pay their own provider's rates."""
        return DataCost(self.storage_usd_per_hour / nodes, self.transfer_usd / nodes)


def data_cost(run: RunData, cls: ProviderClass, data: DataA) -> DataCost:
    """storage = stored TB × $/TB-month ÷ hours per month (× the run's hours); transfers = dataset GB × (source
    egress + ingress) + exported GB × egress, at the provider class `cls`."""
    storage = run.stored_tb * data.storage_usd_per_tb_month[cls] / HOURS_PER_MONTH
    moved_in = run.dataset_tb * TB / GB * (data.dataset_source_egress_usd_per_gb + data.ingress_usd_per_gb[cls])
    moved_out = run.exported_tb * TB / GB * data.egress_usd_per_gb[cls]
    return DataCost(storage, moved_in + moved_out)


@dataclass(frozen=True)
class CheckpointFigures:
    """A plan's checkpointing: interval τ, write time δ, the cluster's MTBF M, checkpoint size, the successful
    checkpoints of the run and its total cost per successful checkpoint ([seed-001]'s budgeting unit). Infinite
    interval and MTBF (and no cost per checkpoint) without interruptions."""

    interval_hours: float
    write_hours: float
    mtbf_hours: float
    size_tb: float
    successful: float
    cost_per_successful_usd: float | None


def checkpoint_figures(t: TimeEstimate, total_cost_usd: float) -> CheckpointFigures:
    """τ, δ and M of the time estimate, its checkpoint's size, the successful checkpoints — ideal hours ÷ τ: one per
    τ hours of work, the work a failure loses written again — and the plan's total cost ÷ that count."""
    tau = t.checkpoint_interval_hours
    successful = t.ideal_hours / tau if math.isfinite(tau) and tau > 0 else 0.0
    return CheckpointFigures(tau, t.checkpoint_write_hours, t.mtbf_hours, t.checkpoint_bytes / TB, successful,
                             total_cost_usd / successful if successful > 0 else None)


__all__ = ["provider_class", "RunData", "run_data", "DataCost", "data_cost", "CheckpointFigures",
           "checkpoint_figures", "TB", "GB"]
