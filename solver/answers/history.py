"""What changed between two saved solves, and which inputs caused it (`--compare-to`, `plan diff`).

A saved plan carries the problem as validated and a snapshot of every quote the solve could use, so a diff can
name the input changes behind a changed decision — the quote whose price moved, the problem value that was edited —
the way Infracost's `--compare-to` explains a cloud bill. Everything here is structured data; `render/diff.py`
prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..estimate.options import option_quote_ready
from ..inputs.rules import adjustments, delay_days, names_quote
from ..model.decode import Decision
from ..solve.checker import violations
from ..solve.pipeline import Context
from ..solve.plan import make_plan


def _flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for i, v in enumerate(node):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = node
    return out


def _decision(plan: dict[str, Any] | None) -> Any:
    if not plan:
        return None
    return (plan["option"], plan["nodes"], tuple(sorted((q["id"], q["nodes"]) for q in plan["quotes"])))


PLAN_FIELDS = ("accelerator", "system", "mode", "offer", "nodes", "gpus", "start", "finish")
"""What a decision is, field by field (`offer`: on demand, reserved, spot or managed, from schema 2 on)."""
RISK_FIELDS = ("p_deadline", "late_days_expected", "finish_p90", "objective_usd")
"""The risk figures a diff shows (each only when both saved plans carry it)."""


@dataclass(frozen=True)
class PlanChange:
    """One row of a diff: a decision field, a quote's nodes, the cash or a risk figure; `action` is `terraform
    plan`'s marker: add (nothing before), remove (nothing after) or change. `unit`: nodes, usd or None."""

    field: str
    before: Any
    after: Any
    action: str = "change"
    unit: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "from": self.before, "to": self.after, "action": self.action,
                **({"unit": self.unit} if self.unit else {})}


@dataclass(frozen=True)
class LineChange:
    """A cost line (dollars) that moved by a dollar or more; one only one plan has is added or removed."""

    line: str
    before: float
    after: float
    action: str

    @property
    def delta(self) -> float:
        return self.after - self.before

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "from": self.before, "to": self.after, "delta": self.delta, "action": self.action}


@dataclass(frozen=True)
class InputChange:
    """An input behind a change: a problem value by path (`kind` problem), or a quote that is new, removed or has a
    field changed (`kind` quote); `used`: a quote either plan uses (listed first)."""

    kind: str
    used: bool
    path: str | None = None
    quote: str | None = None
    field: str | None = None
    change: str | None = None
    before: Any = None
    after: Any = None

    @classmethod
    def of(cls, d: dict[str, Any]) -> "InputChange":
        """Back from `as_dict` (a program's diff keeps its causes as JSON data)."""
        return cls(d["kind"], bool(d.get("used")), path=d.get("path"), quote=d.get("id"), field=d.get("field"),
                   change=d.get("change"), before=d.get("from"), after=d.get("to"))

    def as_dict(self) -> dict[str, Any]:
        if self.kind == "problem":
            return {"kind": "problem", "path": self.path, "from": self.before, "to": self.after, "used": self.used}
        if self.change is not None:
            return {"kind": "quote", "id": self.quote, "change": self.change, "used": self.used}
        return {"kind": "quote", "id": self.quote, "field": self.field, "from": self.before, "to": self.after,
                "used": self.used}


@dataclass(frozen=True)
class DiffSummary:
    """Rows counted by marker, the cost and cash deltas (both plans present), and whether anything changed at all —
    what `plan diff`'s exit status says."""

    changed: bool
    add: int
    remove: int
    change: int
    cost_delta_usd: float | None = None
    cash_delta_usd: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"changed": self.changed, "add": self.add, "remove": self.remove, "change": self.change}
        if self.cost_delta_usd is not None and self.cash_delta_usd is not None:
            out.update(cost_delta_usd=self.cost_delta_usd, cash_delta_usd=self.cash_delta_usd)
        return out


@dataclass(frozen=True)
class PlanDiff:
    """What changed between two saved solves; `as_dict` is the JSON contract (`from`/`to` for before/after)."""

    same_inputs: bool
    same_problem: bool
    problems: tuple[str, str]
    status: tuple[str, str]
    decision_changed: bool
    changes: tuple[PlanChange, ...]
    cost_lines: tuple[LineChange, ...] | None
    summary: DiffSummary
    causes: tuple[InputChange, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"same_inputs": self.same_inputs, "same_problem": self.same_problem, "problems": list(self.problems),
                "status": list(self.status), "decision_changed": self.decision_changed,
                **({"cost_lines": [c.as_dict() for c in self.cost_lines]} if self.cost_lines is not None else {}),
                "changes": [c.as_dict() for c in self.changes], "summary": self.summary.as_dict(),
                "causes": [c.as_dict() for c in self.causes]}


@dataclass(frozen=True)
class PlanToday:
    """Yesterday's decision under today's inputs: still feasible, and at what cost and finish, or why not."""

    feasible: bool
    reason: str | None = None
    cost_usd: float | None = None
    finish: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"feasible": self.feasible, **({"reason": self.reason} if self.reason is not None else {}),
                **({"cost_usd": self.cost_usd, "finish": self.finish} if self.cost_usd is not None else {})}


def _action(before: Any, after: Any) -> str:
    """`terraform plan`'s markers: add (nothing before), remove (nothing after), change."""
    if before in (None, 0) and after not in (None, 0):
        return "add"
    if after in (None, 0) and before not in (None, 0):
        return "remove"
    return "change"


def _plan_changes(po: dict[str, Any], pn: dict[str, Any]) -> list[PlanChange]:
    """The decision's fields, each used quote's nodes, the cash, then the risk figures that differ."""
    changes = [PlanChange(key, po[key], pn[key]) for key in PLAN_FIELDS
               if key in po and key in pn and po[key] != pn[key]]
    qo = {q["id"]: q["nodes"] for q in po["quotes"]}
    qn = {q["id"]: q["nodes"] for q in pn["quotes"]}
    changes += [PlanChange(f"quote {qid}", qo.get(qid, 0), qn.get(qid, 0),
                           _action(qo.get(qid, 0), qn.get(qid, 0)), "nodes")
                for qid in sorted(set(qo) | set(qn)) if qo.get(qid, 0) != qn.get(qid, 0)]
    cash_a, cash_b = po["cash_usd"].get("total"), pn["cash_usd"].get("total")
    if cash_a is not None and cash_b is not None and abs(cash_a - cash_b) >= 1:
        changes.append(PlanChange("cash", cash_a, cash_b, unit="usd"))
    ra, rb = po.get("risk") or {}, pn.get("risk") or {}
    changes += [PlanChange(key, ra[key], rb[key], unit="usd" if key.endswith("_usd") else None)
                for key in RISK_FIELDS if ra.get(key) is not None and rb.get(key) is not None and ra[key] != rb[key]]
    return changes


def _cost_lines(po: dict[str, Any], pn: dict[str, Any]) -> list[LineChange]:
    """Cost lines (dollars) that moved by a dollar or more; a line only one plan has is added or removed."""
    lines = []
    for name in sorted(set(po["cost_usd"]) | set(pn["cost_usd"])):
        a, b = po["cost_usd"].get(name), pn["cost_usd"].get(name)
        if abs((a or 0.0) - (b or 0.0)) >= 1:
            lines.append(LineChange(name, a or 0.0, b or 0.0, "add" if a is None else "remove" if b is None
                                    else "change"))
    return lines


def _summary(status: tuple[str, str], rows: list[Any], po: dict[str, Any] | None,
             pn: dict[str, Any] | None) -> DiffSummary:
    count = {a: sum(1 for r in rows if r.action == a) for a in ("add", "remove", "change")}
    both = po is not None and pn is not None
    return DiffSummary(bool(rows) or status[0] != status[1], count["add"], count["remove"], count["change"],
                       (pn["cost_usd"].get("total") or 0.0) - (po["cost_usd"].get("total") or 0.0) if both else None,
                       (pn["cash_usd"].get("total") or 0.0) - (po["cash_usd"].get("total") or 0.0) if both else None)


def diff(old: dict[str, Any], new: dict[str, Any]) -> PlanDiff:
    """Structured differences between two saved solves (validated by `inputs.saved.load_saved`), the way
    `terraform plan` lists them: each row carries an action (add, remove, change), and the summary counts them and
    says whether anything changed."""
    ro, rn = old["result"], new["result"]
    po, pn = ro.get("plan"), rn.get("plan")
    changes: list[PlanChange] = []
    lines: list[LineChange] | None = None
    if po and pn:
        changes, lines = _plan_changes(po, pn), _cost_lines(po, pn)
    elif po or pn:
        changes.append(PlanChange("plan", po and po["option"], pn and pn["option"], "add" if not po else "remove"))
    status = (ro["status"], rn["status"])
    return PlanDiff(old["inputs"]["digest"] == new["inputs"]["digest"], ro["problem"] == rn["problem"],
                    (ro["problem"], rn["problem"]), status, _decision(po) != _decision(pn), tuple(changes),
                    None if lines is None else tuple(lines), _summary(status, changes + (lines or []), po, pn),
                    tuple(input_changes(old["inputs"], new["inputs"],
                                        {q["id"] for p in (po, pn) if p for q in p["quotes"]})))


def input_changes(io: dict[str, Any], inew: dict[str, Any], relevant: set[str]) -> list[InputChange]:
    """Input changes: problem values (by path) and quote fields, the quotes in `relevant` (those either answer
    uses) first."""
    causes: list[InputChange] = []
    fo, fn = _flatten(io["problem"]), _flatten(inew["problem"])
    causes += [InputChange("problem", True, path=k, before=fo.get(k), after=fn.get(k))
               for k in sorted(set(fo) | set(fn)) if k != "catalogs" and fo.get(k) != fn.get(k)]
    qo, qn = io["quotes"], inew["quotes"]
    for qid in sorted(set(qo) | set(qn)):
        a, b = qo.get(qid), qn.get(qid)
        if a == b:
            continue
        used = qid in relevant
        if a is None or b is None:
            causes.append(InputChange("quote", used, quote=qid, change="new" if a is None else "removed"))
            continue
        causes += [InputChange("quote", used, quote=qid, field=k, before=a.get(k), after=b.get(k))
                   for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return sorted(causes, key=lambda c: (not c.used, c.kind != "quote", c.quote or "", c.path or "", c.field or ""))


def old_plan_today(ctx: Context, old: dict[str, Any]) -> PlanToday | None:
    """Is yesterday's decision still feasible under today's inputs, and what would it cost now?"""
    po = old["result"].get("plan")
    if not po:
        return None
    u, problem = ctx.universe, ctx.problem
    a = problem.assumptions.values
    opt = next((o for o in u.options if o.id == po["option"]), None)
    if opt is None:
        return PlanToday(False, f"option {po['option']} is no longer offered (quotes expired or removed)")
    pt = next((p for p in opt.points if p.n == po["nodes"]), None)
    alloc = {q["id"]: q["nodes"] for q in po["quotes"]}
    missing = sorted(q for q in alloc if q not in {x.id for x in opt.quotes})
    if missing:
        return PlanToday(False, "quotes no longer available: " + ", ".join(missing))
    if pt is None or pt.time is None:
        return PlanToday(False, "configuration no longer workable")
    delay = sum(delay_days(then) for rule, then in adjustments(problem.spec.rules, opt.attrs, pt.gpus, pt.n, pt.days,
                                                                pt.power_kw) if names_quote(rule, alloc))
    ready = {q.id: option_quote_ready(q, opt, a) for q in opt.quotes}
    start = max([opt.ready_day + delay, u.earliest_day] + [ready[q] + delay for q in alloc])
    plan = make_plan(problem, u, Decision(opt.id, pt.n, tuple(sorted(alloc.items())), start, 0), ctx.unit,
                     ctx.screen.outlook)
    bad = violations(problem, u, plan, model_units=False)
    return PlanToday(not bad, "; ".join(bad) if bad else None, round(plan.total_cost),
                     (problem.as_of + timedelta(days=start + pt.days)).isoformat())


__all__ = ["PlanDiff", "PlanChange", "LineChange", "InputChange", "DiffSummary", "PlanToday", "diff",
           "input_changes", "old_plan_today"]
