"""Model settings, as in the OpenAI Agents SDK: per agent, overridable per run."""

from __future__ import annotations

import os
from typing import Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from stepswitch._site import caller_site
from stepswitch.errors import UserError

__all__ = ["ModelSettings"]

_PYDANTIC_DIR = os.path.dirname(os.path.abspath(pydantic.__file__))


class ModelSettings(BaseModel):
    """Sampling and tool settings sent with every model call of an agent.

    ``None`` means "not set": the provider's default applies. ``resolve`` layers one
    settings object over another, the way a run's settings override an agent's.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    tool_choice: Literal["auto", "required", "none"] | str | None = None
    parallel_tool_calls: bool | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    extra_body: dict[str, Any] | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _user_error(cls, data: Any, handler: Any) -> Any:
        """A wrong field is a ``UserError`` naming it and the caller's line, as every
        declaration mistake is (pydantic's own error names no line, in many lines)."""
        if isinstance(data, dict) and "reasoning" in data:
            data = _map_reasoning(dict(data))
        try:
            return handler(data)
        except ValidationError as exc:
            first: dict[str, str] = {}  # a union field fails once per member: keep one
            for e in exc.errors():
                field = str(e["loc"][0]) if e["loc"] else "settings"
                first.setdefault(field, f"{field}: {e['msg']} (got {e['input']!r})")
            site = caller_site(skip=(_PYDANTIC_DIR,))
            raise UserError(f"ModelSettings at {site}: {'; '.join(first.values())}") from None

    def resolve(self, override: ModelSettings | None) -> ModelSettings:
        """These settings with every field that ``override`` sets replaced."""
        if override is None:
            return self
        changes = override.model_dump(exclude_unset=True, exclude_none=True)
        return self.model_copy(update=changes)

    def forces_tool_call(self) -> bool:
        """True when the model must call a tool every turn (it cannot answer in text)."""
        if self.tool_choice is None:
            return False
        return self.tool_choice not in ("auto", "none")


def _map_reasoning(data: dict[str, Any]) -> dict[str, Any]:
    """The Agents SDK's ``reasoning=Reasoning(effort=...)`` (or a dict) as our
    ``reasoning_effort``; a part we cannot send (``summary``, ...) is refused by name."""
    reasoning = data.pop("reasoning")
    if reasoning is None:
        return data
    if isinstance(reasoning, dict):
        parts = {k: v for k, v in reasoning.items() if v is not None}
    elif hasattr(reasoning, "model_dump"):
        parts = {k: v for k, v in reasoning.model_dump().items() if v is not None}
    else:
        site = caller_site(skip=(_PYDANTIC_DIR,))
        raise UserError(
            f"ModelSettings at {site}: reasoning: expected Reasoning(effort=...) or a dict, got "
            f"{type(reasoning).__name__} {reasoning!r}; write reasoning_effort=\"low\" instead"
        )
    effort = parts.pop("effort", None)
    if parts:
        site = caller_site(skip=(_PYDANTIC_DIR,))
        raise UserError(
            f"ModelSettings at {site}: reasoning: {', '.join(sorted(parts))} cannot be sent by "
            "stepswitch; only the effort maps (reasoning_effort=...), or pass the rest through "
            "extra_body={\"reasoning\": {...}}"
        )
    if effort is not None:
        if data.get("reasoning_effort") not in (None, effort):
            site = caller_site(skip=(_PYDANTIC_DIR,))
            raise UserError(
                f"ModelSettings at {site}: reasoning effort {effort!r} and reasoning_effort "
                f"{data['reasoning_effort']!r} disagree; give reasoning_effort only"
            )
        data["reasoning_effort"] = effort
    return data
