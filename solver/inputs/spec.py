"""The schema of a problem file (`constraints/*.yaml`): workload, schedule, site, budget, policy, risk, rules.

Every section is a strict pydantic model, so unknown keys, wrong types and impossible values become clear
errors with file, line and field path, one line per mistake, worded by `messages.py`. Values given with `--set PATH=VALUE` are validated by the same models
(`problem.py` applies them to the raw data first), so they get exactly the same checks.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import BeforeValidator, Discriminator, Field, Tag, field_validator, model_validator

from .schema import Strict
from .units import Count, Date, Money, MoneyOrZero, NonNegFloat, PositiveFloat, parse_quantity

Method = Literal["pretrain", "continued_pretrain", "full_finetune", "lora", "qlora"]
OPERATORS = ("gt", "ge", "lt", "le", "eq")
ALL_MODES: tuple[Literal["buy", "cloud", "managed"], ...] = ("buy", "cloud", "managed")


def _within(v: float, lo: float, hi: float, expected: str) -> float:
    if v < lo or v > hi:
        raise ValueError(f"expected {expected}, got {v:.3g}")
    return v


_BINARY = re.compile(r"^\s*([0-9]+)\s*([KkMm])i\s*$")
_DECIMAL_SUFFIX = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KkMm])\s*$")


def _tokens_length(v: Any) -> Any:
    """A sequence length: a whole number, or one with a binary suffix (`4Ki` = 4096, `1Mi` = 1,048,576), the way
    context lengths are spoken of ("4K context" is 4096 tokens). A decimal suffix is refused rather than read as
    4,000: it is almost always meant as 4096."""
    if isinstance(v, str):
        binary = _BINARY.match(v)
        if binary:
            return int(binary.group(1)) * (1024 if binary.group(2) in "Kk" else 1024 ** 2)
        decimal = _DECIMAL_SUFFIX.match(v)
        if decimal:
            n, suffix = decimal.group(1), decimal.group(2).upper()
            raise ValueError(f"expected a whole number of tokens (e.g. 4096 or 4Ki), got {v!r} ({n}{suffix}i is "
                             f"{float(n) * (1024 if suffix == 'K' else 1024 ** 2):,.0f} tokens)")
    return v


class Workload(Strict):
    method: Method
    params: Count
    tokens: Count
    seq_len: Annotated[int, BeforeValidator(_tokens_length)] = Field(default=4096, ge=16, le=4_194_304)
    """Tokens per sequence: 4096, or 4Ki (binary suffixes Ki and Mi; `4k` is refused as ambiguous)."""
    precision: Literal["bf16", "fp8"] = "bf16"
    optimizer: Literal["adamw", "adamw_8bit", "sgd_momentum"] = "adamw"
    recompute: Literal["none", "selective", "full", "auto"] = "selective"
    framework: Literal["pytorch", "jax"] = "pytorch"
    flash_attention: bool = True
    layers: int | None = Field(default=None, ge=1, le=10_000)
    hidden: int | None = Field(default=None, ge=64, le=1_000_000)
    heads: int | None = Field(default=None, ge=1, le=10_000)
    vocab: int | None = Field(default=None, ge=2, le=10_000_000)
    lora_rank: int | None = Field(default=None, ge=1, le=65_536)
    measured_mfu: dict[str, Annotated[float, Field(gt=0, le=1)]] | None = Field(default=None, max_length=64)
    """MFU the user measured on a platform (accelerator id → achieved fraction of the dense BF16 peak, e.g. from a
    bake-off of a scaled-down model): it replaces the modelled MFU there, and the spread narrows to
    `uncertainty.measured_mfu_sigma` (what a measurement at a smaller scale leaves unknown)."""

    @field_validator("params")
    @classmethod
    def _params_sane(cls, v: float) -> float:
        return _within(v, 1e6, 1e14, "between 1M and 100T parameters")

    @field_validator("tokens")
    @classmethod
    def _tokens_sane(cls, v: float) -> float:
        return _within(v, 1e3, 1e16, "between 1K and 10,000T tokens")

    @model_validator(mode="after")
    def _lora_rank(self) -> "Workload":
        if self.lora_rank is not None and self.method not in ("lora", "qlora"):
            raise ValueError("lora_rank applies only to method lora or qlora")
        return self


class Schedule(Strict):
    earliest_start: Date | None = None
    deadline: Date | None = None
    """The planned schedule must finish by it; days after it are late, each priced at
    `objective.late_usd_per_day` (`estimate/outlook.py`)."""
    late_after: Date | None = None
    """Count days late from this date instead of the deadline — a target with a price and no hard limit, when there
    is no deadline (the frontier moves the deadline and keeps the lateness of yours this way)."""


class Site(Strict):
    it_power_kw: PositiveFloat = Field(le=10_000_000)
    cooling: list[Literal["air", "liquid"]] = Field(min_length=1)
    racks: int = Field(ge=1, le=1_000_000)
    rack_power_kw: PositiveFloat = Field(le=10_000)
    electricity_usd_per_kwh: PositiveFloat
    pue: float = Field(default=1.3, ge=1.0, le=3.0)
    colocation_usd_per_kw_month: MoneyOrZero | None = Field(default=None, le=100_000)
    """A rented cage: rent per IT kW per month, paid in cash (replaces the own-hall facility assumption)."""

    @field_validator("electricity_usd_per_kwh")
    @classmethod
    def _price(cls, v: float) -> float:
        if v > 10:
            raise ValueError(f"expected a price per kWh like 0.08, got {v:g}")
        return v


class Budget(Strict):
    max_usd: Money | None = Field(default=None, le=1e13)
    applies_to: Literal["cash", "cost"] = "cash"


class Selection(Strict):
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)


AfterRun = Literal["resell", "reuse", "idle"]
AFTER_RUN_DEFAULT: AfterRun = "resell"
"""A one-off run's hardware is sold when the run ends: what a finance team books for a project that does not own
the cluster's future (README, "The cost of owning")."""


class Policy(Strict):
    modes: list[Literal["buy", "cloud", "managed"]] = Field(default_factory=lambda: list(ALL_MODES), min_length=1)
    require_ecc: bool = False
    accelerators: Selection = Field(default_factory=Selection)
    vendors: Selection = Field(default_factory=Selection)
    after_run: AfterRun = AFTER_RUN_DEFAULT
    allow_estimates: bool = True
    max_fabrics: int = Field(default=1, ge=1, le=64)
    """How many interconnect fabrics (provider clusters; your own site is one) one job's nodes may come from."""
    allow_preemptible: bool = False
    """Spot capacity for multi-node pretraining: refused unless allowed (a reclaimed node stalls the whole job)."""
    spare_nodes_pct: float | None = Field(default=None, ge=0, le=100)
    """Hot spare nodes kept beside a multi-node job, % of its nodes, charged as its own nodes (`spares` line);
    None: `risk.reliability.spare_nodes_pct`; 0: none."""
    deadline_confidence: float | None = Field(default=None, ge=0.5, le=0.999)
    """The deadline as a chance constraint: the plan must finish by it in at least this share of the risk
    scenarios (`estimate/chance.py`). None: the deadline binds the plan's expected schedule only."""
    horizon_years: float = Field(default=3, ge=1, le=10)
    """The years a plan's total cost of ownership covers (`plan.tco`, `estimate/tco.py`): bought hardware is held
    that long from its first delivery, then sold ([seed-000] compares routes by their three-year total cost)."""
    utilisation_after_run: float | None = Field(default=None, ge=0, le=1)
    """Share of the hours between the end of the run and the end of the horizon in which bought hardware does work
    you would otherwise rent (`plan.tco`); None: `risk.tco.utilisation_after_run`."""

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        if isinstance(data, dict) and "accounting" in data:
            raise ValueError("policy.accounting was replaced by policy.after_run: resell (the default: the "
                             "hardware is sold after the run), reuse (was depreciation) or idle (was full_capex)")
        return data


class Comparison(Strict):
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    eq: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _parse(cls, data: Any) -> Any:
        if isinstance(data, (int, float, str)) and not isinstance(data, bool):
            return {"eq": parse_quantity(data, "64")}
        if isinstance(data, dict):
            out = {}
            for k, v in data.items():
                if k not in OPERATORS:
                    raise ValueError(f"unknown operator '{k}' (use one of {', '.join(OPERATORS)})")
                out[k] = parse_quantity(v, "64")
            if not out:
                raise ValueError("empty comparison; use e.g. {gt: 64}")
            return out
        raise ValueError("expected a number or a comparison like {gt: 64}")

    def test(self, x: float) -> bool:
        checks = [(self.gt, x > (self.gt or 0)), (self.ge, x >= (self.ge or 0)), (self.lt, x < (self.lt or 0)),
                  (self.le, x <= (self.le or 0)), (self.eq, x == (self.eq or 0))]
        return all(ok for bound, ok in checks if bound is not None)


class When(Strict):
    accelerator: str | list[str] | None = None
    system: str | list[str] | None = None
    vendor: str | list[str] | None = None
    class_: str | list[str] | None = Field(default=None, alias="class")
    mode: str | list[str] | None = None
    quote: str | list[str] | None = None
    ecc: bool | None = None
    cooling: str | list[str] | None = None
    software: str | list[str] | None = None
    network: str | list[str] | None = None
    gpus: Comparison | None = None
    nodes: Comparison | None = None
    days: Comparison | None = None
    power_kw: Comparison | None = None
    cost: Comparison | None = None


class Adjust(Strict):
    add_usd: MoneyOrZero | None = Field(default=None, le=1e12)
    add_pct: float | None = Field(default=None, ge=-90, le=1000)
    delay_days: NonNegFloat | None = None
    mfu_factor: float | None = Field(default=None, gt=0, le=2)

    @model_validator(mode="after")
    def _some(self) -> "Adjust":
        if all(getattr(self, k) is None for k in ("add_usd", "add_pct", "delay_days", "mfu_factor")):
            raise ValueError("expected forbid, require, or at least one of add_usd, add_pct, delay_days, mfu_factor")
        return self


class Rule(Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=80)
    when: When = Field(default_factory=When)
    then: Annotated[Union[Annotated[Literal["forbid", "require"], Tag("word")], Annotated[Adjust, Tag("adjust")]],
                    Discriminator(lambda v: "word" if isinstance(v, str) else "adjust")]
    note: str | None = None

    @model_validator(mode="after")
    def _cost_only_hard(self) -> "Rule":
        if self.when.cost is not None and isinstance(self.then, Adjust):
            raise ValueError("a rule conditioned on cost can only forbid or require (an adjustment would change "
                             "the cost it tests)")
        if self.when.days is not None and isinstance(self.then, Adjust) and self.then.mfu_factor is not None:
            raise ValueError("mfu_factor cannot depend on days (it changes the days it tests)")
        return self


class CostObjective(Strict):
    """`objective:` as a mapping. The objective is always the risk-adjusted completion cost: the expected cost over
    the risk scenarios plus the price of every day past the deadline (`estimate/outlook.py`).

    - `late_usd_per_day`: what a day past the deadline costs you, whatever made it late (default: the problem's
      `risk.money.delay_cost_usd_per_day`);
    - `cvar_weight` λ: minimise (1 − λ)·E[cost] + λ·CVaR95[cost] (default `risk.uncertainty.aversion`, 0);
    - `delay_cost_usd_per_day`: a value of time on top — each day of the planned finish adds it (finishing earlier
      is worth it even before the deadline); `cost` is kept at 1."""

    cost: float = Field(default=1.0, gt=0)
    delay_cost_usd_per_day: MoneyOrZero = Field(default=0, le=1e10)
    late_usd_per_day: MoneyOrZero | None = Field(default=None, le=1e10)
    cvar_weight: float | None = Field(default=None, ge=0.0, le=1.0)


class ProblemSpec(Strict):
    """A problem file as validated; `Problem` (problem.py) adds the catalogs, assumptions and provenance."""

    name: str = Field(min_length=1, max_length=200)
    description: str | None = None
    as_of: Date | None = None
    catalogs: list[str] = Field(default_factory=list)
    workload: Workload
    schedule: Schedule = Field(default_factory=Schedule)
    site: Site | None = None
    budget: Budget = Field(default_factory=Budget)
    policy: Policy = Field(default_factory=Policy)
    risk: dict[str, Any] = Field(default_factory=dict)
    rules: list[Rule] = Field(default_factory=list)
    objective: Annotated[Union[Annotated[Literal["cost", "time"], Tag("word")],
                               Annotated[CostObjective, Tag("weighted")]],
                         Discriminator(lambda v: "word" if isinstance(v, str) else "weighted")] = "cost"

    @model_validator(mode="after")
    def _unique_rules(self) -> "ProblemSpec":
        names = [r.name for r in self.rules]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"rule names must be unique; '{dup[0]}' appears twice")
        return self
