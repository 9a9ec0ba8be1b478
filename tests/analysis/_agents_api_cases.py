"""The failing and passing cases of SW650-SW654 (what the hosted Agents API cannot
express): each workflow's agents run on an ``AgentsAPIModel`` of their own, so a plain
``check()`` infers the target."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

import stepswitch as ss
from stepswitch.models import AgentsAPIModel

Build = Callable[[], ss.Workflow]


class Verdict(BaseModel):
    refund: bool


@ss.function_tool
def lookup_order(order_id: int) -> str:
    """Look up an order."""
    return str(order_id)


def _hosted(**options: Any) -> AgentsAPIModel:
    return AgentsAPIModel("gpt-test", **options)


def _big_tool(n: int) -> ss.FunctionTool:
    def big(order_id: int) -> str:
        return str(order_id)

    big.__name__ = f"big_{n}"
    return ss.function_tool(description_override="x" * 400_000)(big)


def _agent(name: str = "a", model: Any = None, **kw: Any) -> ss.Agent:
    return ss.Agent(name, "Do the work.", model=model or _hosted(), **kw)


def _wf(*agents: ss.Agent) -> ss.Workflow:
    return ss.Workflow("hosted", entry=agents[0], agents=list(agents))


def _tools(n: int) -> ss.Workflow:
    return _wf(_agent(tools=[_big_tool(i) for i in range(n)]))


def _metadata(value: str) -> ss.Workflow:
    # the model's metadata is checked before any session is made: build it past the
    # constructor's own check, as a model object of the user's might carry it
    model = _hosted()
    model.metadata = {"ticket": value}
    return _wf(_agent(model=model))


def _subagents(multi_agent: bool) -> ss.Workflow:
    return _wf(_agent(model=_hosted(multi_agent=multi_agent), tools=[lookup_order]))


def _drop_tools(data: ss.HandoffInputData) -> ss.HandoffInputData:
    return data


def _filtered(with_filter: bool) -> ss.Workflow:
    billing = _agent("billing")
    options: dict[str, Any] = {"input_filter": _drop_tools} if with_filter else {}
    return _wf(_agent("front", handoffs=[ss.handoff(billing, **options)]), billing)


def _settings(**settings: Any) -> ss.Workflow:
    return _wf(_agent(model_settings=ss.ModelSettings(**settings)))


def _outputs(same: bool) -> ss.Workflow:
    refund = _agent("refund", output_type=Verdict)
    front = _agent("front", handoffs=[refund], output_type=Verdict if same else None)
    return _wf(front, refund)


AGENTS_API_CASES: dict[str, tuple[Build, Build]] = {
    "SW650": (lambda: _tools(9), lambda: _tools(1)),
    "SW651": (lambda: _metadata("x" * 600), lambda: _metadata("T-1042")),
    "SW652": (lambda: _subagents(True), lambda: _subagents(False)),
    "SW653": (lambda: _filtered(True), lambda: _filtered(False)),
    "SW654": (lambda: _settings(temperature=0.2), lambda: _settings(reasoning_effort="low")),
}

EXTRA_SW654: tuple[Build, Build] = (lambda: _outputs(False), lambda: _outputs(True))
"""SW654's other finding: a handoff between agents of different output types."""
