"""The pydantic models that check a declaration's fields when a plain check fails.

``Agent``, ``handoff``, ``as_tool`` and ``Workflow`` first check their fields with a
few type tests that accept only values these models accept too; a declaration that
passes (nearly every one) never loads this module. One that does not is validated
here, by the same models as before, so what pydantic accepts (``max_uses="3"``, a
``FunctionTool`` subclass) is still accepted, and a bad field gets the same message
(:func:`stepswitch.dsl._validate.validate_fields`). Building these classes costs
about a tenth of a generated runner's cold start, which is why they are not built on
import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, InstanceOf

from stepswitch.dsl.agent import Agent, AgentTool, Handoff, StopAtTools
from stepswitch.dsl.guardrails import InputGuardrail, OutputGuardrail
from stepswitch.dsl.hosted import HostedTool
from stepswitch.dsl.tools import FunctionTool
from stepswitch.settings import ModelSettings

__all__ = ["AgentArgs", "AgentToolArgs", "HandoffArgs", "WorkflowArgs"]


class HandoffArgs(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    target: Agent | str
    max_uses: int | None = Field(default=None, ge=1)
    tool_name: str | None = Field(default=None, min_length=1)
    description: str | None = None
    on_handoff: Callable[..., Any] | None = None
    input_filter: Callable[..., Any] | None = None


class AgentToolArgs(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    target: Agent | str
    name: str | None = Field(default=None, min_length=1)
    description: str | None = None
    max_turns: int | None = Field(default=None, ge=1)
    max_depth: int | None = Field(default=None, ge=1)
    needs_approval: bool | Callable[..., Any] = False
    output_extractor: Callable[..., Any] | None = None


class AgentArgs(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    instructions: str | Callable[..., Any] | None = None
    tools: list[FunctionTool | AgentTool | InstanceOf[HostedTool]] = Field(default_factory=list)
    handoffs: list[Agent | Handoff | str] = Field(default_factory=list)
    model_settings: InstanceOf[ModelSettings] | None = None  # a dict would not be stored
    handoff_description: str | None = None
    input_guardrails: list[InputGuardrail] = Field(default_factory=list)
    output_guardrails: list[OutputGuardrail] = Field(default_factory=list)
    tool_use_behavior: (
        Literal["run_llm_again", "stop_on_first_tool"] | StopAtTools | Callable[..., Any]
    ) = "run_llm_again"
    ignore: list[str] = Field(default_factory=list)


class WorkflowArgs(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    entry: Agent | str | None
    agents: list[Agent]
    max_turns: int | None = Field(default=10, ge=1)
    max_depth: int = Field(default=8, ge=1)
    max_model_calls: int | None = Field(default=None, ge=1)
    ignore: list[str] = Field(default_factory=list)
