"""The trail of a hosted Agents API session: its item list, checked for pins that do not
line up (``stepswitch trail`` on what ``client.beta.agents.sessions.items.list`` gives).

A session's calls are pinned by the pair ``(turn_id, call_id)``: a ``function_call`` is
answered by exactly one ``function_call_output`` of the same pair, after it. The checks
are :mod:`~stepswitch.review.trail`'s pins on those pairs (TR101-TR106), plus what only a
session has: the calls still due are those its ``required_actions`` list, never guessed
from the item history (a listed call that already has an output is TR107, a listed call
no item made TR111), and subagent items are attributed to their actor (a
``sender_agent_id`` or ``recipient_agent_id`` that the root agent never created is TR112;
one used after its ``close_subagent_call`` TR113).

Accepted shapes (oldest item first, as ``order="asc"`` lists them): a JSON list of items;
a cursor page ``{"object": "list", "data": [...]}``; or ``{"session": {...}, "items":
[...]}``, a session as ``sessions.retrieve`` gives it beside its items, which makes the
pending calls known.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch.review.trail import Finding, Trail, TrailReport, _pins
from stepswitch.review.trail_read import ItemKind, TrailError, TrailItem

__all__ = ["AgentsTrail", "check_agents_trail", "is_agents_trail", "read_agents_trail"]

_SUBAGENT_ITEMS = frozenset({
    "agent_message", "send_subagent_input_call", "resume_subagent_call",
    "wait_for_subagents_call", "interrupt_subagent_call", "close_subagent_call",
})
_OTHER = frozenset({
    "mcp_call", "web_search_call", "computer_use_call", "command_execution",
    "computer_use_approval_request", "computer_use_approval_request_result",
    "create_subagent_call", *_SUBAGENT_ITEMS,
})


@dataclass(frozen=True, slots=True)
class AgentsTrail:
    """A session's item list, read: ``trail`` holds one :class:`TrailItem` per item (a
    call's ``call_id`` is its pair, written ``turn_id/call_id``; ``agent`` is the actor
    the item is attributed to), ``raw`` the items as given."""

    trail: Trail
    raw: tuple[Mapping[str, Any], ...]
    wheres: tuple[str, ...]
    pending: frozenset[tuple[str, str]] | None
    """The pairs the session's ``required_actions`` list; None when no session was given."""
    root: str | None
    """The root agent's id (the session's ``agent.id``), when known."""

    def actors(self) -> dict[str, int]:
        """How many items each actor made, the root agent first."""
        counts: dict[str, int] = {}
        for item in self.trail.items:
            if item.agent is not None:
                counts[item.agent] = counts.get(item.agent, 0) + 1
        return counts


def is_agents_trail(doc: Any) -> bool:
    """Whether a parsed JSON document is an Agents API item list (or page, or session
    dump) rather than a saved state or a Responses item list: its items carry turn ids."""
    if isinstance(doc, dict):
        if "session" in doc and "items" in doc:
            return True
        doc = doc.get("data") if doc.get("object") == "list" else None
    return isinstance(doc, list) and any(isinstance(i, dict) and "turn_id" in i for i in doc)


def read_agents_trail(doc: Any) -> AgentsTrail:
    """An :class:`AgentsTrail` from a parsed document; :class:`TrailError` names what is
    not one."""
    session: Any = None
    prefix = ""
    if isinstance(doc, dict) and "session" in doc:
        session, doc, prefix = doc["session"], doc.get("items"), "items"
        if not isinstance(session, dict):
            raise TrailError("session: expected an object (as sessions.retrieve gives it)")
    elif isinstance(doc, dict):
        doc, prefix = doc.get("data"), "data"
    if not isinstance(doc, list):
        raise TrailError(f"{prefix or 'the document'}: expected a list of session items")
    pending: frozenset[tuple[str, str]] | None = None
    root: str | None = None
    if session is not None:
        actions = session.get("required_actions") or []
        if not isinstance(actions, list):
            raise TrailError("session.required_actions: expected a list")
        pending = frozenset((str(a.get("turn_id")), str(a.get("call_id"))) for a in actions
                            if isinstance(a, dict) and a.get("type") == "function_call")
        agent = session.get("agent")
        if isinstance(agent, dict) and isinstance(agent.get("id"), str):
            root = agent["id"]
    items: list[TrailItem] = []
    wheres: list[str] = []
    raw: list[Mapping[str, Any]] = []
    for i, item in enumerate(doc):
        where = f"{prefix}[{i}]"
        if not isinstance(item, dict):
            raise TrailError(f"item {where}: expected an object, got {type(item).__name__}")
        items.append(_item(i, where, item, root or "root"))
        wheres.append(where)
        raw.append(item)
    return AgentsTrail(Trail("items", tuple(items)), tuple(raw), tuple(wheres), pending, root)


def _pair(item: Mapping[str, Any], where: str) -> str:
    turn, call = item.get("turn_id"), item.get("call_id")
    if not isinstance(turn, str) or not isinstance(call, str):
        raise TrailError(f"item {where}: a {item.get('type')} item needs a turn_id and a "
                         "call_id (strings)")
    return f"{turn}/{call}"


def _item(i: int, where: str, item: Mapping[str, Any], root: str) -> TrailItem:
    """One item; ``agent`` is its actor: a subagent item's sender, else the root agent
    (the session's own list holds the root's items and the coordination calls)."""
    kind = item.get("type")
    item_id = item.get("id") if isinstance(item.get("id"), str) else None
    sender = item.get("sender_agent_id") if kind in _SUBAGENT_ITEMS else None
    agent = sender if isinstance(sender, str) else root
    if kind == "message":
        role = item.get("role")
        what: ItemKind = "message" if role == "assistant" else "input"
        return TrailItem(i, where, what, agent=agent if role == "assistant" else None,
                         item_id=item_id)
    if kind == "function_call":
        name = item.get("name")
        return TrailItem(i, where, "call", _pair(item, where),
                         name if isinstance(name, str) else None, agent, item_id=item_id)
    if kind == "function_call_output":
        failed = item.get("status") == "failed" or item.get("error") is not None
        output = item.get("output") if isinstance(item.get("output"), str) else None
        return TrailItem(i, where, "output", _pair(item, where), is_error=failed,
                         item_id=item_id, output=output)
    if kind == "reasoning":
        return TrailItem(i, where, "reasoning", agent=agent, item_id=item_id)
    if kind in _OTHER:
        return TrailItem(i, where, "other", agent=agent, item_id=item_id)
    raise TrailError(f"item {where}: unknown session item type {kind!r}")


def check_agents_trail(trail: AgentsTrail) -> TrailReport:
    """Every finding about a session's item list, in item order."""
    out: list[Finding] = []
    _pins(trail.trail, out)
    calls = {i.call_id: i for i in trail.trail.items if i.kind == "call"}
    answered = {i.call_id for i in trail.trail.items if i.kind == "output"}
    due = _due(trail, calls, answered)
    kept: list[Finding] = []
    for f in out:
        call = trail.trail.items[f.index] if f.index is not None else None
        if f.code == "TR101" and call is not None and call.call_id in due:
            continue  # pending: the session still asks for its result
        if f.code == "TR102" and call is not None and call.call_id is not None:
            f = _other_turn(f, call.call_id, calls)
        kept.append(f)
    kept.extend(_pending_findings(trail, calls, answered))
    kept.extend(_actor_findings(trail))
    kept.sort(key=lambda f: (f.index if f.index is not None else -1, f.code))
    return TrailReport(tuple(kept), len(trail.trail.items), False)


def _due(trail: AgentsTrail, calls: Mapping[str | None, TrailItem],
         answered: set[str | None]) -> set[str]:
    """The calls still owed a result: those the session lists; without the session,
    those whose item says they are in progress."""
    if trail.pending is not None:
        return {f"{t}/{c}" for t, c in trail.pending}
    return {str(k) for k, item in calls.items() if k not in answered
            and trail.raw[item.position].get("status") == "in_progress"}


def _other_turn(f: Finding, pair: str, calls: Mapping[str | None, TrailItem]) -> Finding:
    call_id = pair.split("/", 1)[1]
    other = [k for k in calls if k is not None and k.split("/", 1)[1] == call_id]
    if not other:
        return f
    return Finding(f.code, f"{f.message}; a call {call_id!r} is in turn "
                   f"{other[0].split('/', 1)[0]!r}: a write-back names its call's own pair",
                   f.index, f.where)


def _pending_findings(trail: AgentsTrail, calls: Mapping[str | None, TrailItem],
                      answered: set[str | None]) -> list[Finding]:
    out = []
    for turn, call in sorted(trail.pending or ()):
        pair = f"{turn}/{call}"
        if pair not in calls:
            out.append(Finding("TR111", f"the session asks for the result of call {pair!r}, "
                               "which no function_call item made", None,
                               "session.required_actions"))
        elif pair in answered:
            item = calls[pair]
            out.append(Finding("TR107", f"call {pair!r} ({item.name!r}) is still due (the "
                               "session's required_actions list it), yet the items record "
                               "its output as if it were history", item.position, item.where))
    return out


def _actor_findings(trail: AgentsTrail) -> list[Finding]:
    """TR112/TR113: subagent items whose actors were never created, or were closed."""
    out = []
    root = trail.root
    created: set[str] = set()
    closed: dict[str, str] = {}
    for n, item in enumerate(trail.raw):
        kind = item.get("type")
        where = trail.wheres[n]
        if kind == "create_subagent_call" and isinstance(item.get("agent_id"), str):
            created.add(item["agent_id"])
            continue
        if kind not in _SUBAGENT_ITEMS:
            continue
        sender = item.get("sender_agent_id")
        if root is None and isinstance(sender, str) and sender not in created:
            root = sender  # with no session given, the first uncreated sender is the root
        names = [("sender", sender)]
        recipients = item.get("recipient_agent_ids")
        if isinstance(recipients, list):
            names += [("recipient", r) for r in recipients]
        else:
            names.append(("recipient", item.get("recipient_agent_id")))
        for role, actor in names:
            if not isinstance(actor, str):
                continue
            if actor != root and actor not in created:
                out.append(Finding("TR112", f"a {kind} item names {role} {actor!r}, an agent "
                                   "no create_subagent_call made (nor the root agent)", n,
                                   where))
            elif actor in closed:
                out.append(Finding("TR113", f"a {kind} item names {role} {actor!r}, closed by "
                                   f"the close_subagent_call at {closed[actor]}", n, where))
        recipient = item.get("recipient_agent_id")
        if kind == "close_subagent_call" and isinstance(recipient, str):
            closed.setdefault(recipient, where)
    return out
