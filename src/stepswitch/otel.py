"""Spans to a file and back: a JSON-lines exporter and a terminal tree of a trace.

Needs ``opentelemetry-sdk`` (``pip install 'stepswitch[otel]'``) to export; reading a
file back needs nothing. The run loop itself only uses ``opentelemetry-api``
(:mod:`stepswitch.runtime.tracing`); this module is for the command line and for
users who want spans in a file with no collector::

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from stepswitch.otel import JsonLinesExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter("run.jsonl")))
    machine.run_sync("hi", model=model, run_config=ss.RunConfig(tracer_provider=provider))

``stepswitch trace run.jsonl`` then prints the run as an indented tree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from stepswitch._dataclass import dataclass
from stepswitch._files import FileRefused, read_regular
from stepswitch._json import dumps, loads
from stepswitch._visible import visible
from stepswitch.errors import UserError
from stepswitch.runtime import semconv as sc

__all__ = ["JsonLinesExporter", "SpanRecord", "file_provider", "format_tree", "read_spans"]


@dataclass(slots=True)
class SpanRecord:
    """One span as written to (and read from) a JSON-lines file."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    kind: str
    start_ns: int
    end_ns: int
    status: str = "UNSET"
    status_description: str | None = None
    """What the error was (the exception's message), on a span whose status is ERROR."""
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> str:
        return dumps(  # a lone surrogate as its escape: the line is UTF-8 and reads back as is
            {
                "name": self.name,
                "trace_id": self.trace_id,
                "span_id": self.span_id,
                "parent_id": self.parent_id,
                "kind": self.kind,
                "start_ns": self.start_ns,
                "end_ns": self.end_ns,
                "status": self.status,
                **({"status_description": self.status_description}
                   if self.status_description else {}),
                "attributes": self.attributes,
                "events": self.events,
            },
            default=str,
        )


def _record(span: Any) -> SpanRecord:
    ctx = span.context
    parent = span.parent
    return SpanRecord(
        name=span.name,
        trace_id=f"{ctx.trace_id:032x}",
        span_id=f"{ctx.span_id:016x}",
        parent_id=f"{parent.span_id:016x}" if parent is not None else None,
        kind=span.kind.name,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or 0,
        status=span.status.status_code.name,
        status_description=span.status.description or None,
        attributes={k: _plain(v) for k, v in (span.attributes or {}).items()},
        events=[
            {"name": e.name, "time_ns": e.timestamp,
             "attributes": {k: _plain(v) for k, v in (e.attributes or {}).items()}}
            for e in span.events
        ],
    )


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value


try:  # exporting needs the SDK; reading a file back does not
    from opentelemetry.sdk.trace.export import SpanExporter as _ExporterBase
except ImportError:  # pragma: no cover - depends on the installed extras
    _ExporterBase = object  # type: ignore[misc,assignment]


def _need_sdk() -> None:
    if _ExporterBase is object:
        from stepswitch._site import shadowing

        raise UserError(
            shadowing("opentelemetry")
            or "writing spans needs opentelemetry-sdk: pip install 'stepswitch[otel]'"
        )


class JsonLinesExporter(_ExporterBase):
    """An OpenTelemetry span exporter that appends one JSON object per span to a file."""

    def __init__(self, path: str | Path) -> None:
        _need_sdk()
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--trace {path}: cannot write it: {exc.strerror or exc}") from None

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        lines = "".join(_record(s).to_json() + "\n" for s in spans)
        with self._lock:
            self._file.write(lines)
            self._file.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            self._file.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def file_provider(path: str | Path) -> Any:
    """A ``TracerProvider`` that writes every span of a run to ``path`` as JSON lines.
    Call its ``shutdown()`` when the run is over."""
    _need_sdk()
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "stepswitch"}))
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(path)))
    return provider


# -- reading back ---------------------------------------------------------------------------


_SPAN_FIELDS = ("name", "trace_id", "span_id", "kind", "start_ns", "end_ns")
"""The fields every span line has (``run --trace`` writes them all)."""


def read_spans(
    path: str | Path, *, cut_off: Callable[[str], None] | None = None
) -> list[SpanRecord]:
    """The spans of a JSON-lines file; ``UserError`` names the line that is not a span,
    the second span of a shared id, or a span whose parents lead back to it.

    A last line that is not JSON and has no newline after it is what a run stopped in
    the middle of writing leaves: given ``cut_off``, it is passed a note saying so and
    the spans before it are read; without, it is refused as any bad line is."""
    try:
        text = read_regular(path).decode("utf-8")
    except FileRefused as exc:
        raise UserError(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: cannot read it: not UTF-8 text") from None
    out: list[SpanRecord] = []
    lines: dict[str, int] = {}  # span id -> its line
    rows = text.splitlines()
    for n, line in enumerate(rows, start=1):
        if not line.strip():
            continue
        try:
            raw = loads(line)
        except ValueError as exc:
            if cut_off is not None and n == len(rows) and out and not text.endswith("\n"):
                cut_off(f"{path}:{n}: the last line is cut off (a run stopped while writing "
                        f"it?); showing the {len(out)} span(s) before it")
                break
            raise UserError(f"{path}:{n}: not a JSON line ({exc.args[0]})") from None
        if not isinstance(raw, dict):
            raise UserError(f"{path}:{n}: not a span (expected a JSON object)")
        missing = [name for name in _SPAN_FIELDS if name not in raw]
        if missing:
            fields = ", ".join(missing)
            raise UserError(
                f"{path}:{n}: not a span (missing field{'s' if len(missing) > 1 else ''} "
                f"{fields})"
            )
        try:
            span = _from_json(raw)
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{path}:{n}: not a span ({exc})") from None
        first = lines.setdefault(span.span_id, n)
        if first != n:
            raise UserError(f"{path}:{n}: span id {visible(span.span_id)!r} is already the "
                            f"id of the span on line {first}")
        out.append(span)
    cycle = _cycle(out)
    if cycle is not None:
        raise UserError(f"{path}:{lines[cycle[0]]}: {_cycle_text(cycle)}")
    return out


def _cycle(spans: Sequence[SpanRecord]) -> list[str] | None:
    """The ids of one parent cycle among ``spans`` (first span of the cycle first), or
    None. Iterative: a chain of any length costs no recursion."""
    parent = {s.span_id: s.parent_id for s in spans}
    done: set[str] = set()  # ids known to lead to a root
    for s in spans:
        path: list[str] = []
        on_path: set[str] = set()
        node: str | None = s.span_id
        while node is not None and node in parent and node not in done:
            if node in on_path:
                return path[path.index(node):]
            on_path.add(node)
            path.append(node)
            node = parent[node]
        done.update(path)
    return None


def _cycle_text(cycle: list[str]) -> str:
    chain = " → ".join(visible(i) for i in [*cycle, cycle[0]])
    return f"spans form a parent cycle ({chain}); a trace is a tree"


def _from_json(raw: dict[str, Any]) -> SpanRecord:
    def text(name: str) -> str:
        value = raw[name]
        if not isinstance(value, str):
            raise TypeError(f"{name} is not a string")
        return value

    def number(name: str) -> int:
        value = raw[name]
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} is not an integer")
        return value

    parent = raw.get("parent_id")
    if parent is not None and not isinstance(parent, str):
        raise TypeError("parent_id is not a string")
    attrs = raw.get("attributes", {})
    events = raw.get("events", [])
    if not isinstance(attrs, dict) or not isinstance(events, list):
        raise TypeError("attributes/events have the wrong type")
    for i, event in enumerate(events):
        if isinstance(event, dict) and not isinstance(event.get("attributes", {}), dict):
            raise TypeError(f"events[{i}].attributes is not an object")
    description = raw.get("status_description")
    if description is not None and not isinstance(description, str):
        raise TypeError("status_description is not a string")
    return SpanRecord(
        name=text("name"), trace_id=text("trace_id"), span_id=text("span_id"),
        parent_id=parent, kind=text("kind"), start_ns=number("start_ns"),
        end_ns=number("end_ns"), status=str(raw.get("status", "UNSET")),
        status_description=description, attributes=attrs,
        events=[e for e in events if isinstance(e, dict)],
    )


def _duration(span: SpanRecord) -> str:
    ms = max(0, span.end_ns - span.start_ns) / 1e6
    return f"{ms:.1f} ms" if ms >= 0.1 else f"{ms * 1000:.0f} µs"


def _label(span: SpanRecord) -> str:
    a = span.attributes
    parts = [span.name, _duration(span)]
    if sc.STEP in a:
        parts.append(f"→ {a[sc.STEP]}")
    if sc.USAGE_INPUT_TOKENS in a or sc.USAGE_OUTPUT_TOKENS in a:
        parts.append(f"tokens {a.get(sc.USAGE_INPUT_TOKENS, 0)} in / "
                     f"{a.get(sc.USAGE_OUTPUT_TOKENS, 0)} out")
    if sc.TOOL_CALL_ID in a:
        parts.append(f"call {a[sc.TOOL_CALL_ID]}")
    if span.status == "ERROR":
        error = f"ERROR {a.get(sc.ERROR_TYPE, '')}".rstrip()
        if span.status_description:
            error += f": {_clip(span.status_description)}"
        parts.append(error)
    return "  ".join(str(p) for p in parts)


def _clip(text: str, room: int = 120) -> str:
    """An error's message on one line of the tree: its first line, at most ``room``."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= room else first[: room - 1] + "…"


_SHORT = {
    sc.AGENT_NAME: "agent",
    sc.TOOL_NAME: "tool",
    sc.TOOL_CALL_ID: "call",
    sc.TURN: "turn",
    sc.ERROR_TYPE: "error",
}


def _event_label(event: dict[str, Any]) -> str | None:
    name = str(event.get("name", ""))
    if name == "stepswitch.turn":
        return None  # the turn's step is on its chat span
    a = event.get("attributes") or {}
    detail = ", ".join(
        f"{_SHORT.get(k, k.removeprefix('stepswitch.'))}={v}" for k, v in a.items()
    )
    short = name.removeprefix("stepswitch.")
    return f"· {short}" + (f" ({detail})" if detail else "")


def format_tree(spans: Iterable[SpanRecord]) -> str:
    """An indented tree per trace: each span with its duration, the step of each model
    call, token counts, call ids, errors, and the run's events.

    Text from the file (names, ids, attributes: a model chose some of them) is shown
    with terminal escapes and other hidden characters escaped. A parent cycle is a
    ``UserError`` (its spans would have no place in the tree); a tree of any depth is
    walked without recursion."""
    spans = list(spans)
    cycle = _cycle(spans)
    if cycle is not None:
        raise UserError(_cycle_text(cycle))
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[SpanRecord]] = {}
    for s in spans:
        parent = s.parent_id if s.parent_id in ids else None
        children.setdefault(parent, []).append(s)
    for kids in children.values():
        kids.sort(key=lambda s: (s.start_ns, s.end_ns))
    lines: list[str] = []
    shown: set[str] = set()  # ids whose children are listed (a shared id: listed once)

    def walk(root: SpanRecord) -> None:
        # a span's events and its children in the order they happened (an event with
        # no time, as a hand-written file may have, at its span's start)
        stack: list[tuple[SpanRecord | str, int]] = [(root, 1)]
        while stack:
            span, depth = stack.pop()
            pad = "  " * depth
            if isinstance(span, str):  # an event's line
                lines.append(pad + visible(span))
                continue
            lines.append(pad + visible(_label(span)))
            below: list[tuple[int, int, SpanRecord | str]] = []
            for event in span.events:
                text = _event_label(event)
                if text is not None:
                    at = event.get("time_ns")
                    when = at if type(at) is int else span.start_ns
                    below.append((when, len(below), text))
            if span.span_id not in shown:
                shown.add(span.span_id)
                for kid in children.get(span.span_id, []):
                    below.append((kid.start_ns, len(below), kid))
            below.sort(key=lambda entry: (entry[0], entry[1]))
            stack.extend((entry, depth + 1) for _, _, entry in reversed(below))

    roots = children.get(None, [])
    traces: dict[str, list[SpanRecord]] = {}
    for root in roots:
        traces.setdefault(root.trace_id, []).append(root)
    for trace_id, trace_roots in traces.items():
        lines.append(f"trace {visible(trace_id)}")
        for root in trace_roots:
            walk(root)
    return "\n".join(lines)
