"""The history plan both adapters share: every call sent is followed at once by its
output, nothing unpaired is sent, and the order of the run is kept."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from stepswitch.models._convert import Answered, Said, ToolOutputEntry, plan_history
from stepswitch.runtime.items import (
    HandoffCallItem,
    HandoffOutputItem,
    MessageOutputItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    UserInputItem,
)


@st.composite
def histories(draw: st.DrawFn) -> list[Any]:
    """A run's items: turns of text and calls; each call's output comes in the same
    turn, in a later one (approved after a pause), or never (still pending)."""
    items: list[Any] = [UserInputItem("start")]
    late: list[Any] = []
    n = 0
    for _turn in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            items.append(MessageOutputItem("a", f"text {n}"))
        outputs: list[Any] = []
        for _ in range(draw(st.integers(0, 3))):
            cid = f"c{n}"
            n += 1
            handoff = draw(st.booleans())
            call_cls = HandoffCallItem if handoff else ToolCallItem
            items.append(call_cls("a", "f", cid, "{}"))
            when = draw(st.sampled_from(["now", "later", "never"]))
            out = (
                HandoffOutputItem("a", cid, "{}", "a", "b")
                if handoff
                else ToolCallOutputItem("a", cid, f"out {cid}")
            )
            if when == "now":
                outputs.append(out)
            elif when == "later":
                outputs.append(ToolApprovalItem("a", "f", cid, "{}"))
                late.append(out)
        items.extend(outputs)
        if draw(st.booleans()):
            items.append(ToolCallOutputItem("a", f"orphan{n}", "nobody called this"))
        if len(late) > 0 and draw(st.booleans()):
            items.extend(late)
            late = []
        if draw(st.booleans()):
            items.append(UserInputItem(f"user {n}"))
    return items


@settings(max_examples=200, deadline=None)
@given(histories())
def test_every_sent_call_is_followed_by_its_output(items: list[Any]) -> None:
    plan = plan_history(items)
    answered = {i.call_id for i in items if isinstance(i, ToolCallOutputItem | HandoffOutputItem)}
    called = {i.call_id for i in items if isinstance(i, ToolCallItem | HandoffCallItem)}
    sent_calls: list[str] = []
    for k, entry in enumerate(plan):
        if isinstance(entry, Answered):
            ids = [c.call_id for c in entry.calls]
            sent_calls.extend(ids)
            following = plan[k + 1 : k + 1 + len(ids)]
            assert [r.call_id for r in following if isinstance(r, ToolOutputEntry)] == ids
        if isinstance(entry, ToolOutputEntry):
            assert entry.call_id in called
    assert sorted(sent_calls) == sorted(called & answered)  # each once, unpaired left out
    results = [e.call_id for e in plan if isinstance(e, ToolOutputEntry)]
    assert len(results) == len(set(results))
    # user messages and texts keep their order
    said = [e.text for e in plan if isinstance(e, Said)]
    assert said == [i.content for i in items if isinstance(i, UserInputItem)]
    texts = [e.text for e in plan if isinstance(e, Answered) and e.text]
    assert texts == [i.content for i in items if isinstance(i, MessageOutputItem)]


def test_refusal_and_text_of_one_message() -> None:
    plan = plan_history([MessageOutputItem("a", "", "I won't.")])
    assert plan == [Answered(None, "I won't.", ())]
