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
