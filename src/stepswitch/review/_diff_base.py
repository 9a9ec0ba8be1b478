"""What every part of ``diff_specs`` shares: the change record, the categories, the
text helpers and the differ's base (``add``, ``limit``, approvals, order). Not API;
:mod:`stepswitch.review.diff` re-exports the public names.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from stepswitch._dataclass import dataclass
from stepswitch.graph.spec import (
    Location,
    Ref,
    WorkflowSpec,
)
from stepswitch.ir import Approval

__all__ = ["CATEGORIES", "Category", "Change", "ChangeKind", "Subject"]

Category = Literal["state", "model", "safety", "structure", "cosmetic"]


CATEGORIES: tuple[Category, ...] = ("state", "model", "safety", "structure", "cosmetic")
"""Every category, most breaking first (the order of the text output)."""


ChangeKind = Literal["added", "removed", "renamed", "changed"]


Subject = tuple[str, ...]
"""What a change is about, for diagrams: ``("workflow",)``, ``("agent", name)``,
``("edge", source, tool_name)`` (a handoff or agent tool), ``("tool", agent, name)``
(a function tool) or ``("guardrail", agent, name)``. Agent names are the head's."""


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the two workflows."""

    category: Category
    kind: ChangeKind
    path: str
    """Where in the spec, by name: ``agents.triage.tools.lookup_order.description``."""
    message: str
    base: Location | None
    """The declaration in the base version (None for an addition)."""
    head: Location | None
    """The declaration in the head version (None for a removal)."""
    subject: Subject


_T = TypeVar("_T")


_WORKFLOW_FIELDS = frozenset({
    "spec_version", "name", "entry", "agents", "max_turns", "max_depth", "max_model_calls",
    "context_type", "ignore", "location", "steps", "flow", "policies", "max_cost_usd",
    "max_total_tokens",
})


_AGENT_FIELDS = frozenset({
    "name", "instructions", "instructions_fn", "instructions_context_type", "tools",
    "handoffs", "agent_tools", "output_type", "model", "model_ref", "model_settings",
    "handoff_description", "input_guardrails", "output_guardrails", "tool_use_behavior",
    "ignore", "mcp_servers", "hooks", "location",
})


_TOOL_FIELDS = frozenset({
    "name", "description", "parameters", "strict", "schema_problems", "needs_approval",
    "ref", "is_async", "context_type", "failure_mode", "max_uses", "location", "mcp_server",
    "is_enabled", "input_guardrails", "output_guardrails",
    "unknown_doc_params",  # a docstring typo the model never sees: SW305's, not a change
})


_HANDOFF_FIELDS = frozenset({
    "target", "tool_name", "description", "max_uses", "input_schema", "input_type",
    "schema_problems", "on_handoff", "on_handoff_context_type", "input_filter", "location",
    "is_enabled",
})


_AGENT_TOOL_FIELDS = frozenset({
    "target", "tool_name", "description", "parameters", "parameters_type",
    "schema_problems", "max_turns", "max_depth", "needs_approval", "output_extractor",
    "extractor_input_type", "is_enabled", "location",
})


_GUARDRAIL_FIELDS = frozenset({
    "name", "kind", "ref", "run_in_parallel", "declared_type", "context_type", "location",
})


_APPROVAL_RANK: dict[Approval, int] = {"never": 0, "per_call": 1, "always": 2}


def _q(name: str) -> str:
    return repr(name)


def _preview(text: str | None, width: int = 60, start: int = 0) -> str:
    if text is None:
        return "none"
    flat = " ".join(text.split())
    head = "…" if start > 0 else ""
    shown = flat[start:]
    return repr(head + (shown if len(shown) <= width else shown[: width - 1] + "…"))


def _texts(before: str | None, after: str | None) -> str:
    """``'old' → 'new'``, both shown from a little before where they first differ."""
    if before is None or after is None:
        return f"{_preview(before)} → {_preview(after)}"
    a, b = " ".join(before.split()), " ".join(after.split())
    same = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        same += 1
    start = max(0, same - 20)
    return f"{_preview(a, start=start)} → {_preview(b, start=start)}"


def _limit(value: int | None) -> str:
    return "none" if value is None else str(value)


def _raised(before: int | None, after: int | None) -> bool:
    """True when a limit got looser: raised, or removed (None is no limit)."""
    if before is None:
        return False
    return after is None or after > before


def _ref(ref: Ref | None) -> str | None:
    return None if ref is None else ref.path


def _strip_locations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_locations(v) for k, v in value.items() if k != "location"}
    if isinstance(value, list | tuple):
        return [_strip_locations(v) for v in value]
    return value


def _content(model: Any, *drop: str) -> str:
    """A model's fields without its name(s) and locations, as canonical JSON."""
    data = model.model_dump(mode="json", by_alias=True, exclude=set(drop))
    return json.dumps(_strip_locations(data), sort_keys=True)


def _schema_delta(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    """A short account of how a JSON schema changed (top-level properties)."""
    if before is None or after is None:
        return "added" if before is None else "removed"
    props_a = before.get("properties") if isinstance(before.get("properties"), dict) else None
    props_b = after.get("properties") if isinstance(after.get("properties"), dict) else None
    if props_a is None or props_b is None:
        return "changed"
    parts: list[str] = []
    added = [k for k in props_b if k not in props_a]
    removed = [k for k in props_a if k not in props_b]
    changed = [k for k in props_a if k in props_b and props_a[k] != props_b[k]]
    if added:
        parts.append("property " + ", ".join(map(_q, added)) + " added")
    if removed:
        parts.append("property " + ", ".join(map(_q, removed)) + " removed")
    if changed:
        parts.append("property " + ", ".join(map(_q, changed)) + " changed")
    req_a, req_b = set(before.get("required") or ()), set(after.get("required") or ())
    if req_a != req_b:
        now = sorted(req_b - req_a)
        no_longer = sorted(req_a - req_b)
        if now:
            parts.append(", ".join(map(_q, now)) + " now required")
        if no_longer:
            parts.append(", ".join(map(_q, no_longer)) + " no longer required")
    rest_a = {k: v for k, v in before.items() if k not in ("properties", "required")}
    rest_b = {k: v for k, v in after.items() if k not in ("properties", "required")}
    if rest_a != rest_b:
        parts.append("other schema keywords changed")
    return "; ".join(parts) if parts else "changed"


def _untitled(schema: dict[str, Any], renamed: bool) -> dict[str, Any]:
    """A tool's schema without the title its name gave it, when the tool was renamed."""
    if not renamed or "title" not in schema:
        return schema
    return {k: v for k, v in schema.items() if k != "title"}


_UNKNOWN: dict[tuple[type[Any], type[Any], frozenset[str]], tuple[str, ...]] = {}


def _unknown(before: type[Any], after: type[Any], known: frozenset[str]) -> tuple[str, ...]:
    """The fields of these spec classes that ``known`` lacks (computed once per pair)."""
    key = (before, after, known)
    names = _UNKNOWN.get(key)
    if names is None:
        fields = set(before.model_fields) | set(after.model_fields)
        names = _UNKNOWN[key] = tuple(sorted(fields - known))
    return names


def _first_of_each(items: Sequence[_T], key: Callable[[_T], str]) -> dict[str, _T]:
    if not items:
        return {}
    out: dict[str, _T] = {}
    for item in items:
        out.setdefault(key(item), item)
    return out


def _match(
    removed: list[str],
    added: list[str],
    key_b: Callable[[str], str],
    key_h: Callable[[str], str],
) -> dict[str, str]:
    """Pair removed and added names whose key (a function path, a target) is the same and
    unique on both sides."""
    if not removed or not added:
        return {}
    heads: dict[str, list[str]] = {}
    for name in added:
        heads.setdefault(key_h(name), []).append(name)
    bases: dict[str, list[str]] = {}
    for name in removed:
        bases.setdefault(key_b(name), []).append(name)
    out = {}
    for key, names in bases.items():
        candidates = heads.get(key, [])
        if len(names) == 1 and len(candidates) == 1:
            out[names[0]] = candidates[0]
    return out


class _Base:
    """The differ's state and the primitives every comparison uses."""

    def __init__(self, base: WorkflowSpec, head: WorkflowSpec) -> None:
        self.base = base
        self.head = head
        self.changes: list[Change] = []
        self.renamed: dict[str, str] = {}
        """base agent name → head agent name, for renamed agents."""

    def add(
        self,
        category: Category,
        kind: ChangeKind,
        path: str,
        message: str,
        base: Location | None,
        head: Location | None,
        subject: Subject,
    ) -> None:
        self.changes.append(Change(category, kind, path, message, base, head, subject))

    def limit(
        self,
        path: str,
        what: str,
        before: int | None,
        after: int | None,
        bl: Location,
        hl: Location,
        subject: Subject,
    ) -> None:
        if before == after:
            return
        if _raised(before, after):
            verb = "removed" if after is None else "raised"
            self.add("safety", "changed", path,
                     f"{what} {verb}: {_limit(before)} → {_limit(after)}", bl, hl, subject)
        else:
            verb = "added" if before is None else "lowered"
            self.add("structure", "changed", path,
                     f"{what} {verb}: {_limit(before)} → {_limit(after)}", bl, hl, subject)

    def unknown_fields(
        self,
        before: Any,
        after: Any,
        known: frozenset[str],
        path: str,
        bl: Location | None,
        hl: Location | None,
        subject: Subject,
    ) -> None:
        """Fields a newer spec has and this module does not know: still compared."""
        for name in _unknown(type(before), type(after), known):
            a, b = getattr(before, name, None), getattr(after, name, None)
            if a != b:
                self.add("structure", "changed", f"{path}.{name}", f"{name} changed",
                         bl, hl, subject)

    def gate(self, p: str, what: str, before: Any, after: Any, bl: Location | None,
             hl: Location | None, subject: Subject) -> None:
        """``is_enabled`` changed: who is offered the part (access control): ``safety``."""
        shown = {True: "always", False: "never"}
        a = shown[before] if isinstance(before, bool) else before.path
        b = shown[after] if isinstance(after, bool) else after.path
        if a != b:
            self.add("safety", "changed", f"{p}.is_enabled",
                     f"is_enabled of {what}: {a} → {b}", bl, hl, subject)

    def gate_removed(
        self,
        p: str,
        what: str,
        approval: Approval,
        bl: Location | None,
        subject: Subject,
        *,
        ref: str | None = None,
        target: str | None = None,
    ) -> None:
        """A removed tool (with its agent, or alone) that needed approval: a ``safety``
        change besides the ``state`` one, unless the head still gates the same function
        (``ref``) or the same nested agent (``target``) at least as strictly on some
        agent (the tool moved, its gate with it)."""
        if approval == "never":
            return
        rank = _APPROVAL_RANK[approval]
        for agent in self.head.agents:
            for t in agent.tools:
                if (ref is not None and t.ref.path == ref
                        and _APPROVAL_RANK[t.needs_approval] >= rank):
                    return
            for e in agent.agent_tools:
                if (target is not None and e.target == self.renamed.get(target, target)
                        and _APPROVAL_RANK[e.needs_approval] >= rank):
                    return
        self.add("safety", "removed", f"{p}.needs_approval",
                 f"approval of {what} removed with it (was {approval}; no gate of the same "
                 f"function remains{self._gated_newcomer(p, rank)})", bl, None, subject)

    def _gated_newcomer(self, p: str, rank: int) -> str:
        """A hint when the agent of the removed tool at ``p`` got a new tool gated at least
        as strictly: most likely the same action under a new function (a rename the
        diff cannot prove, so the removal stands)."""
        parts = p.split(".")
        if len(parts) < 3 or parts[0] != "agents":
            return ""
        name = self.renamed.get(parts[1], parts[1])
        before = {t.name for a in self.base.agents if a.name == parts[1] for t in a.tools}
        for agent in self.head.agents:
            if agent.name != name:
                continue
            for t in agent.tools:
                if t.name not in before and _APPROVAL_RANK[t.needs_approval] >= rank:
                    return (f"; tool {t.name!r}, new on agent {name!r}, is gated as strictly: "
                            "if it is this one renamed, its gate is kept")
        return ""

    def approval(
        self,
        p: str,
        what: str,
        before: Approval,
        after: Approval,
        bl: Location,
        hl: Location,
        me: Subject,
    ) -> None:
        if before == after:
            return
        message = f"approval of {what}: {before} → {after}"
        if _APPROVAL_RANK[after] < _APPROVAL_RANK[before]:
            self.add("safety", "changed", f"{p}.needs_approval",
                     message + (" (no human approves its calls any more)"
                                if after == "never" else " (weakened)"), bl, hl, me)
        else:
            self.add("structure", "changed", f"{p}.needs_approval", message, bl, hl, me)

    def order(
        self,
        p: str,
        what: str,
        base: Sequence[str],
        head: Sequence[str],
        renamed: Mapping[str, str],
        bl: Location,
        hl: Location,
        agent: str,
    ) -> None:
        common_b = [renamed.get(n, n) for n in base if n in head or n in renamed]
        kept = set(common_b)
        common_h = [n for n in head if n in kept]
        if common_b != common_h:
            self.add("cosmetic", "changed", p, f"{what} declared in another order", bl, hl,
                     ("agent", agent))
