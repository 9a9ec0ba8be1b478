"""What the hosted Agents API accepts, stated once: the limits of a session's config and
the target description the analyzer checks a workflow against (``--target agents-api``).

Both the analyzer (SW650-SW654, before anything runs) and ``AgentsAPIModel`` (at session
create, for what only a run knows) read these facts from here, so the two cannot drift.
The numbers are the ``openai`` client's own documentation of the API
(``types/beta/agents/session_create_params.py``). Not API: import the public names from
``stepswitch.models`` and ``Workflow.check(target=...)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from stepswitch._dataclass import dataclass

__all__ = [
    "MAX_METADATA_KEY",
    "MAX_METADATA_PAIRS",
    "MAX_METADATA_VALUE",
    "MAX_TOOLS_BYTES",
    "PIN_TYPE",
    "SETTINGS_CARRIED",
    "TARGET_NAME",
    "AgentsAPITarget",
    "function_tool",
    "is_agents_api_model",
    "metadata_problems",
    "resolve_target",
    "tools_bytes",
]

PIN_TYPE = "agents_api.pin"
"""The ``type`` of the item ``AgentsAPIModel`` records for each turn it takes on a session
(a ``ResponsesItem``): the session id, the pending pairs and the usage so far. It is kept
wherever a run's items are kept (states, conversation sessions) and sent to no other API."""

TARGET_NAME = "agents-api"
"""The name of this target on the command line (``check --target agents-api``)."""

MAX_TOOLS_BYTES = 3_145_728
"""The resolved tool list must fit within 3 MiB of compact UTF-8 JSON."""

MAX_METADATA_PAIRS = 16
MAX_METADATA_KEY = 64
MAX_METADATA_VALUE = 512

SETTINGS_CARRIED = frozenset({"reasoning_effort", "extra_body"})
"""The ``ModelSettings`` fields a session's agent config has a place for (reasoning
effort as ``agent.reasoning.effort``; ``extra_body`` merged into the create body).
Every other field set on an agent is a setting the API cannot express (SW654)."""


@dataclass(frozen=True, slots=True)
class AgentsAPITarget:
    """A workflow is checked for the Agents API with these session options (those of the
    ``AgentsAPIModel`` it runs on, or none for a bare ``--target agents-api``)."""

    metadata: tuple[tuple[str, str], ...] = ()
    """The session metadata the model sends, as pairs in its order."""
    multi_agent: bool = False
    """Whether the sessions let the hosted model create subagents."""

    @classmethod
    def of(cls, model: Any) -> AgentsAPITarget:
        """The target an ``AgentsAPIModel`` (or any object with its attributes) stands for."""
        metadata = getattr(model, "metadata", None) or {}
        pairs = tuple((str(k), v) for k, v in dict(metadata).items())
        return cls(pairs, bool(getattr(model, "multi_agent", False)))


def resolve_target(target: Any) -> AgentsAPITarget | None:
    """The Agents API target a check is for: ``target`` as given (``"agents-api"``, an
    ``AgentsAPIModel``, an :class:`AgentsAPITarget`); None stays None (the analysis then
    takes the agents' own, :func:`own_target`)."""
    if target is None or isinstance(target, AgentsAPITarget):
        return target
    if target == TARGET_NAME:
        return AgentsAPITarget()
    if is_agents_api_model(target):
        return AgentsAPITarget.of(target)
    from stepswitch.errors import UserError

    raise UserError(f"target: expected {TARGET_NAME!r} or an AgentsAPIModel, got {target!r}")


def own_target(agents: Iterable[Any], objects: Mapping[str, Any]) -> AgentsAPITarget | None:
    """The Agents API target a check without one is for: the first of the agents' own
    models (``agents``: specs with a ``model_ref``) that runs on the Agents API."""
    for agent in agents:
        model = objects.get(agent.model_ref.path) if agent.model_ref else None
        if is_agents_api_model(model):
            return AgentsAPITarget.of(model)
    return None


def is_agents_api_model(model: Any) -> bool:
    """Whether ``model`` runs on the Agents API (``AgentsAPIModel`` says so by its ``api``)."""
    return getattr(model, "api", None) == "agents"


def metadata_problems(metadata: Iterable[tuple[Any, Any]]) -> list[str]:
    """What breaks the API's metadata limits (16 string pairs, keys up to 64 and values up
    to 512 characters), one line each; empty when the metadata fits."""
    pairs = list(metadata)
    problems = []
    if len(pairs) > MAX_METADATA_PAIRS:
        problems.append(f"{len(pairs)} pairs, more than the {MAX_METADATA_PAIRS} allowed")
    for key, value in pairs:
        if not isinstance(key, str) or not isinstance(value, str):
            problems.append(f"pair {key!r}: keys and values must be strings")
            continue
        if len(key) > MAX_METADATA_KEY:
            problems.append(f"key {key[:20]!r}... has {len(key)} characters, more than "
                            f"{MAX_METADATA_KEY}")
        if len(value) > MAX_METADATA_VALUE:
            problems.append(f"the value of {key!r} has {len(value)} characters, more than "
                            f"{MAX_METADATA_VALUE}")
    return problems


def tools_bytes(tools: Iterable[Mapping[str, Any]]) -> int:
    """The size of a tool list as the API measures it: compact UTF-8 JSON."""
    text = json.dumps(list(tools), separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8"))


def function_tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A function tool in the session config's shape (the API has no ``strict`` flag)."""
    return {"type": "function", "name": name, "description": description,
            "parameters": dict(parameters)}
