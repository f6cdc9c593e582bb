"""Guarded constraint groups: the unit in which the model's limits are named, enforced, dropped and explained.

Every user-facing limit is one group, named by the YAML path the user wrote (`budget.max_usd`, `site.racks`,
`rules.<name>`, `quotes.<id>.max_nodes`, `workload.memory`): the builder enforces a group's constraints with one
literal, solving fixes the literals true, and explanations pass them as assumptions. A conflict is therefore a set
of the user's own statements, each with the line it came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from ..inputs.problem import Problem

GroupKind = Literal["limit", "policy", "rule", "capacity", "fit"]


@dataclass(frozen=True)
class Group:
    """A named, guarded constraint group."""

    id: str
    kind: GroupKind
    yaml_path: tuple[Any, ...]
    text: str
    unit: str | None = None
    value: Any = None


MEMORY = "workload.memory"
"""The group of the memory fit: a fact of the workload, which a user cannot drop, only change the workload."""

PRIORITY = (MEMORY, "policy.modes", "policy.require_ecc", "policy.accelerators", "policy.vendors",
            "policy.allow_estimates", "policy.allow_preemptible", "policy.max_fabrics",
            "site.cooling", "site.rack_power_kw", "site.it_power_kw", "site.racks",
            "schedule.deadline", "policy.deadline_confidence", "schedule.earliest_start", "budget.max_usd")
"""Order in which groups are tried first and listed: physics and policy before limits, limits before capacities
(a reason a user can act on before one only a vendor can)."""

REASON: Mapping[str, str] = MappingProxyType({
    MEMORY: "does not fit in memory at any node count", "policy.modes": "mode not allowed",
    "policy.require_ecc": "no ECC memory", "policy.accelerators": "excluded by the accelerator list",
    "policy.vendors": "excluded by the vendor list", "policy.allow_estimates": "only estimated prices",
    "policy.max_fabrics": "one job cannot span providers' clusters", "policy.allow_preemptible":
    "spot capacity for multi-node pretraining",
    "site.cooling": "site cannot cool it", "site.rack_power_kw": "a node draws more than a rack supplies",
    "site.it_power_kw": "needs more IT power than the site has", "site.racks": "needs more racks",
    "schedule.deadline": "cannot finish by the deadline", "schedule.earliest_start": "cannot start early enough",
    "policy.deadline_confidence": "misses the deadline in too many risk scenarios",
    "budget.max_usd": "over budget at any size"})
"""What a group means as the reason an option cannot work (rules carry their own `note`)."""

NUMERIC = ("budget.max_usd", "schedule.deadline", "schedule.earliest_start", "site.it_power_kw", "site.racks",
           "site.rack_power_kw", "policy.deadline_confidence")
"""Groups that limit a quantity, so that an exact relaxation ("raise it to …") exists; so do quote capacities."""


def capacity_group(qid: str) -> str:
    return f"quotes.{qid}.max_nodes"


def capacity_quote(gid: str) -> str | None:
    """The quote id of a capacity group, or None."""
    if gid.startswith("quotes.") and gid.endswith(".max_nodes"):
        return gid[len("quotes."):-len(".max_nodes")]
    return None


def is_numeric(gid: str) -> bool:
    return gid in NUMERIC or capacity_quote(gid) is not None


def rank(gid: str) -> tuple[int, str]:
    return (PRIORITY.index(gid) if gid in PRIORITY else len(PRIORITY), gid)


def reason(gid: str) -> str:
    return REASON.get(gid, "capacity of this quote" if capacity_quote(gid) else gid)


def where(problem: Problem, gid: str) -> str:
    """Where the user stated a group: `file:line` in the problem file or a catalog file, or the `--set` that gave
    it its value."""
    qid = capacity_quote(gid)
    if qid is not None:
        return problem.catalog.where_quote(qid, "max_nodes")
    parts = gid.split(".")
    if parts[0] == "rules":
        name = ".".join(parts[1:])
        for i, r in enumerate(problem.spec.rules):
            if r.name == name:
                return problem.where(("rules", i))
    if parts[0] == "workload":
        return problem.where(("workload",))
    return problem.where(tuple(parts[:2]))
