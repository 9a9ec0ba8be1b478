from __future__ import annotations

import stepswitch as ss
from tests.analysis._cases import a, lookup, refund_order, wf


def _pauses(w: ss.Workflow) -> dict[str, str]:
    return {d.location.path: d.message for d in w.check().diagnostics if d.code == "SW501"}


def test_direct_nested_and_agent_tool_pause_points() -> None:
    deep = a("deep", tools=[refund_order])
    mid = a("mid", handoffs=[deep])  # its nested run can reach deep
    gated = a("gated", tools=[lookup])
    top = a("top", tools=[mid.as_tool("ask_mid", "M"),
                          gated.as_tool("ask_gated", "G", needs_approval=True)])
    found = _pauses(wf(top, top, mid, deep, gated))
    assert set(found) == {"agents.top", "agents.deep"}
    assert "refund_order (always)" in found["agents.deep"]
    assert "ask_gated (agent tool, always)" in found["agents.top"]
    assert "ask_mid (its nested run of 'mid' can pause)" in found["agents.top"]


def test_per_call_approval() -> None:
    @ss.function_tool(needs_approval=lambda ctx, args, call_id: True)
    def maybe(x: int) -> str:
        """Maybe."""
        return ""

    assert "maybe (per call)" in _pauses(wf("a", a(tools=[maybe])))["agents.a"]
