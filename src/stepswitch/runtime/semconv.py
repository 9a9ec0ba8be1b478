"""The OpenTelemetry names stepswitch's spans use, defined once.

The GenAI semantic conventions (status: development) name agent, tool and inference
spans and their ``gen_ai.*`` attributes. The ``opentelemetry-semantic-conventions``
package marks its GenAI constants deprecated (they moved to a separate repository),
so the names we emit live here, as plain strings, and nothing else spells them.
Names of our own (the step a turn took, the turn number) are under ``stepswitch.``.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "AGENT_NAME",
    "CONVERSATION_ID",
    "ERROR_TYPE",
    "EVENT_APPROVAL_DECIDED",
    "EVENT_APPROVAL_REQUESTED",
    "EVENT_GUARDRAIL_TRIPPED",
    "EVENT_HANDOFF",
    "EVENT_RESUMED",
    "FLOW_FAN_OUT_COUNT",
    "FLOW_NODE",
    "FLOW_NODE_KIND",
    "INPUT_MESSAGES",
    "OPERATION_NAME",
    "OP_CHAT",
    "OP_EXECUTE_TOOL",
    "OP_INVOKE_AGENT",
    "OP_INVOKE_WORKFLOW",
    "OUTPUT_MESSAGES",
    "PROVIDER_NAME",
    "REQUEST_MODEL",
    "SPAN_FAN_OUT",
    "SPAN_FLOW_STEP",
    "STEP",
    "SYSTEM_INSTRUCTIONS",
    "TOOL_CALL_ARGUMENTS",
    "TOOL_CALL_ID",
    "TOOL_CALL_RESULT",
    "TOOL_NAME",
    "TOOL_TYPE",
    "TURN",
    "USAGE_INPUT_TOKENS",
    "USAGE_OUTPUT_TOKENS",
    "WORKFLOW_NAME",
]

# -- operations (gen_ai.operation.name) and the span names built from them ------------------
OP_INVOKE_WORKFLOW: Final = "invoke_workflow"
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_CHAT: Final = "chat"
OP_EXECUTE_TOOL: Final = "execute_tool"

# -- gen_ai.* attributes --------------------------------------------------------------------
OPERATION_NAME: Final = "gen_ai.operation.name"
PROVIDER_NAME: Final = "gen_ai.provider.name"
AGENT_NAME: Final = "gen_ai.agent.name"
WORKFLOW_NAME: Final = "gen_ai.workflow.name"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
REQUEST_MODEL: Final = "gen_ai.request.model"
USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
# content: only with RunConfig(trace_content=True)
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"

# -- general attributes -------------------------------------------------------------------
ERROR_TYPE: Final = "error.type"

# -- ours -----------------------------------------------------------------------------------
STEP: Final = "stepswitch.step"
"""How a turn ended: ``Final``, ``Handoff``, ``Interruption`` or ``RunAgain``."""
TURN: Final = "stepswitch.turn"
"""The turn's number in its run (1 for the first model call)."""

# flows: a code step's span and a fan-out's span (agent nodes are invoke_agent spans)
SPAN_FLOW_STEP: Final = "execute_step"
SPAN_FAN_OUT: Final = "fan_out"
FLOW_NODE: Final = "stepswitch.flow.node"
FLOW_NODE_KIND: Final = "stepswitch.flow.node_kind"
FLOW_FAN_OUT_COUNT: Final = "stepswitch.flow.fan_out.count"

# span events
EVENT_HANDOFF: Final = "stepswitch.handoff"
EVENT_GUARDRAIL_TRIPPED: Final = "stepswitch.guardrail.tripwire"
EVENT_APPROVAL_REQUESTED: Final = "stepswitch.approval.requested"
EVENT_APPROVAL_DECIDED: Final = "stepswitch.approval.decided"
EVENT_RESUMED: Final = "stepswitch.run.resumed"
