"""What a run shows on the terminal: one progress line per event on stderr, the
approval prompt, and the final output on stdout.

Everything shown of a model's or a tool's text passes through
:func:`~stepswitch._visible.visible`: a terminal escape in it is shown, never obeyed.
``run``, ``chat`` and a durable run's watcher (``run --temporal``) all write through here.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from pydantic import BaseModel

from stepswitch._visible import visible
from stepswitch.context import Usage
from stepswitch.runtime.events import (
    AgentUpdatedStreamEvent,
    FlowNodeStreamEvent,
    RawResponsesStreamEvent,
    RunItemStreamEvent,
)
from stepswitch.runtime.items import (
    HandoffOutputItem,
    MessageOutputItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from stepswitch.runtime.state import RunState

__all__ = ["TEXT", "Progress", "ask", "call_text", "decide", "print_output", "where_waits"]


TEXT = "\n\t"
"""What a model's running text keeps as it is when shown (every other control escaped)."""


def print_output(value: Any) -> None:
    """The run's final output on stdout (a structured one as indented JSON)."""
    # the model's text: a terminal escape in it is shown, never obeyed
    if isinstance(value, BaseModel):
        print(visible(value.model_dump_json(indent=2), keep=TEXT))
    elif isinstance(value, dict | list):  # a tool's value as the final output, say
        import json

        try:
            text = json.dumps(value, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):  # no JSON form: its Python form, as before
            text = str(value)
        print(visible(text, keep=TEXT))
    elif value is not None:
        print(visible(str(value), keep=TEXT))


class Progress:
    """Writes one short line per event; with ``stream_text`` also the model's text."""

    def __init__(self, file: TextIO, *, stream_text: bool) -> None:
        self.file = file
        self.stream_text = stream_text
        self._mid_text = False
        # the streamed text no completed message has claimed yet: a message whose text
        # was shown as deltas is not printed again, one that came without deltas (a
        # scripted model, a server that does not stream text) is printed whole
        self._streamed = ""
        self._agent: str | None = None  # the agent the last "→ agent" line named
        self.calls = 0
        self._held: list[str] = []

    def line(self, text: str) -> None:
        self.flush_held()
        self.end_text()
        print(text, file=self.file, flush=True)

    def hold(self, text: str) -> None:
        """A line to print once what it says took effect (the next line or event);
        :meth:`drop_held` forgets it when it did not."""
        self._held.append(text)

    def flush_held(self) -> None:
        held, self._held = self._held, []
        for text in held:
            self.line(text)

    def drop_held(self) -> None:
        self._held.clear()

    def end_text(self) -> None:
        if self._mid_text:
            print(file=self.file, flush=True)
            self._mid_text = False

    def event(self, event: Any) -> None:
        self.flush_held()
        if isinstance(event, AgentUpdatedStreamEvent):
            # a run resumed after an approval starts at the agent it paused in: said once
            if event.new_agent != self._agent:
                self.line(f"→ agent {visible(event.new_agent)}")
            self._agent = event.new_agent
        elif isinstance(event, FlowNodeStreamEvent):
            self._agent = None  # a flow's next agent node is announced, even the same one
            # a flow's agent nodes are announced by their own AgentUpdated event
            if event.kind == "step":
                self.line(f"→ step {visible(event.node)}")
            elif event.kind == "fan_out":
                self.line(f"→ fan-out {visible(event.node)} ×{event.count}")
        elif isinstance(event, RunItemStreamEvent):
            self.item(event.item)
        elif isinstance(event, RawResponsesStreamEvent) and self.stream_text:
            delta = _text_delta(event.data)
            if delta:
                if not self._mid_text:
                    print("  ", end="", file=self.file)
                # the model's text as it comes, with no control character that could
                # hide or rewrite what the terminal shows next (an approval prompt)
                print(visible(delta, keep="\n\t"), end="", file=self.file, flush=True)
                self._mid_text = True
                self._streamed += delta

    def item(self, item: RunItem) -> None:
        if isinstance(item, ToolCallItem):
            self.calls += 1
            self.line(f"  tool {visible(item.name)}({_short(item.arguments)})")
        elif isinstance(item, ToolCallOutputItem):
            mark = "error" if item.is_error else "→"
            self.line(f"    {mark} {_short(item.output)}")
        elif isinstance(item, HandoffOutputItem):
            self.line(
                f"  handoff {visible(item.source_agent)} → {visible(item.target_agent)}"
            )
        elif isinstance(item, MessageOutputItem):
            if item.refusal:
                self.line(f"  {visible(item.agent)} refused: {_short(item.refusal, 200)}")
            elif self.stream_text and self._shown_as_deltas(item.content):
                self.end_text()
            elif item.content:
                self.line(f"  {visible(item.agent)}: {_short(item.content, 200)}")
        elif isinstance(item, ToolApprovalItem):
            self.line(f"  {visible(item.name)} needs approval")

    def _shown_as_deltas(self, content: str) -> bool:
        """Whether ``content`` was already shown as streamed text (and claim it)."""
        if not self._streamed:
            return False
        at = self._streamed.find(content)
        if at < 0:  # shown, but not byte for byte: never print it twice
            self._streamed = ""
        else:
            self._streamed = self._streamed[at + len(content):]
        return True

    def done(self, last_agent: str, usage: Usage, what: str = "agent") -> None:
        self.line(
            f"done: last {what} {visible(last_agent)}, {usage.requests} model call(s), "
            f"{usage.total_tokens} token(s)"
        )


def _text_delta(data: Any) -> str | None:
    if getattr(data, "type", None) == "response.output_text.delta":
        delta = getattr(data, "delta", None)
        return delta if isinstance(delta, str) else None
    choices = getattr(data, "choices", None)
    if choices:
        delta = getattr(choices[0], "delta", None)
        content = getattr(delta, "content", None)
        return content if isinstance(content, str) else None
    return None


def _short(text: str, limit: int = 120) -> str:
    text = visible(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_text(item: ToolApprovalItem) -> str:
    """``name(arguments)`` exactly as the model sent them, every hidden character
    escaped: what a person approves is what runs (never shortened)."""
    return f"{visible(item.name)}({visible(item.arguments)})"


def where_waits(item: ToolApprovalItem) -> str:
    """Whose call it is, when not the run's own: `` in fan-out branch 2 ('handler')``
    (the element's branch, counted from 1), `` in agent tool call c3`` (nested runs
    outermost first)."""
    parts = []
    for key in item.run_path:
        if key.startswith("flow:"):
            node, _, branch = key[len("flow:"):].partition("#")
            parts.append(f"fan-out branch {int(branch) + 1} ({node!r})" if branch.isdigit()
                         else f"node {node!r}")
        else:
            parts.append(f"agent tool call {key}")
    return f" in {visible(', '.join(parts))}" if parts else ""


def decide(state: RunState, pending: list[ToolApprovalItem], policy: str, out: Progress,
           *, can_pause: bool = True) -> bool:
    """Apply the approval policy; False when the run must pause instead (``can_pause``
    False, as in a chat, which cannot wait: the prompt offers no pause)."""
    if policy == "none":
        return False
    for item in pending:
        if policy == "all":
            out.hold(f"  approved {call_text(item)} (--approve all)")
            state.approve(item)
            continue
        choices = "[y/N/p(ause)]" if can_pause else "[y/N]"
        known = {"y", "yes", "n", "no", ""} | ({"p", "pause"} if can_pause else set())
        answer = ask(f"approve {call_text(item)} for agent {visible(item.agent)}? {choices} ")
        while answer is not None and answer not in known:  # a typo is asked again, not a no
            answer = ask(f"  answer y or n{' (or p to pause)' if can_pause else ''}: ")
        if answer is None or answer in ("p", "pause"):
            return False
        if answer in ("y", "yes"):
            state.approve(item)
        else:
            state.reject(item)
            out.hold(f"  rejected {visible(item.name)}")
    return True


def ask(prompt: str) -> str | None:
    """The answer typed on stdin to ``prompt`` (on stderr), lowercased; None at its end."""
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        print(file=sys.stderr)
        return None
    return line.strip().lower()
