"""Model settings, as in the OpenAI Agents SDK: per agent, overridable per run."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["ModelSettings"]


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
