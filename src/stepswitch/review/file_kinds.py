"""Which of stepswitch's files a document is, for the review commands. Not API.

``stepswitch trail`` and ``stepswitch replay`` read recorded runs: a saved ``RunState``
(``run --state``), a ``record=`` file (``run --record FILE``), a recorded case (``run
--record NAME.trail.json``: the recording wrapped with its workflow and expectations)
and item lists. A case is unwrapped here, once, so both commands read what ``run
--record`` writes whatever the file is named. Given one of stepswitch's other files (a
scripted model's script, a trace, a command's JSON report), the error names what the
file is and which command reads it, rather than "got an object".
"""

from __future__ import annotations

import json
from typing import Any

from stepswitch._json import loads

__all__ = ["case_trail", "got", "not_a_run", "other_kind", "other_text_kind", "read_run_doc"]


def read_run_doc(text: str | bytes) -> tuple[Any, str | bytes]:
    """The JSON document of a recorded run's file, with its text: a recorded case's
    trail unwrapped (its text re-made from it). ``ValueError`` with the message to show
    when ``text`` is not JSON (naming the file, when it is a trace)."""
    try:
        doc = loads(text)  # bounded: deep nesting or a huge integer is "not JSON"
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        other = other_text_kind(text)
        raise ValueError(f"not JSON: {exc}" if other is None
                         else f"not a recorded run: it is {other}") from None
    case = case_trail(doc)
    if case is not None:  # what `run --record NAME.trail.json` writes: the run is inside
        return case[0], json.dumps(case[0])
    return doc, text


def not_a_run(doc: Any) -> str:
    """Why ``doc``, which no reader took, is not a recorded run: what it is, when it is
    another of stepswitch's files, else what every reader takes and what it got."""
    other = other_kind(doc)
    if other is not None:
        return f"not a recorded run: it is {other}"
    return ("expected a saved run state, a `run --record` file (a recording or a case) or "
            f"a JSON list of items, got {got(doc)}")


def case_trail(doc: Any) -> tuple[Any, str] | None:
    """A recorded case's embedded trail and its workflow TARGET (as the case spells it,
    relative to the case's folder); None when ``doc`` is no case."""
    if (isinstance(doc, dict) and "format" not in doc and "trail" in doc
            and isinstance(doc.get("workflow"), str)):
        return doc["trail"], doc["workflow"]
    return None


def other_kind(doc: Any) -> str | None:
    """What ``doc`` (parsed JSON) is and which command reads it, when it is one of
    stepswitch's files that holds no recorded run; None when it is not one of them."""
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("steps"), list):
        return ("a scripted model's script, which `stepswitch run --model scripted:FILE` "
                "reads")
    if {"findings", "machine_checked"} <= doc.keys():
        return ("a `stepswitch trail --format json` report, not the run it checked; pass "
                "the run's own file")
    if {"divergence", "same"} <= doc.keys():
        return ("a `stepswitch replay --format json` report, not the run it replayed; "
                "pass the run's own file")
    return None


def other_text_kind(text: str | bytes) -> str | None:
    """What ``text``, which is not one JSON document, is, when it is a file stepswitch
    writes: a trace (``run --trace``) is one span per line."""
    if isinstance(text, bytes):
        text = text[: 1 << 20].decode("utf-8", "replace")  # the first line is enough
    try:
        line = loads(text.lstrip().split("\n", 1)[0])
    except json.JSONDecodeError:  # a JSONLimitError too
        return None
    if isinstance(line, dict) and "trace_id" in line and "span_id" in line:
        return ("a run's trace (`run --trace`: one span per line), which `stepswitch "
                "trace FILE` reads")
    return None


def got(doc: Any) -> str:
    """``doc``'s shape, for an error that says what was found instead."""
    if isinstance(doc, dict):
        keys = ", ".join(repr(k[:40]) for k in sorted(doc)[:5])
        more = ", …" if len(doc) > 5 else ""
        return f"an object with keys {keys}{more}" if doc else "an empty object"
    return type(doc).__name__
