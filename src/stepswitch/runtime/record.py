"""The file ``RunConfig(record=PATH)`` writes: what a run was given and the items it
made, as records. Not API.

The runtime writes it at a run's end; :mod:`stepswitch.review.replay` reads it back
(and ``stepswitch run --record`` adds a case around it). Both read the format from
here, so the runtime never imports the review stage.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["RECORD_FORMAT", "record_doc", "run_doc", "write_doc", "write_record"]

RECORD_FORMAT = "stepswitch.recording"


def record_doc(workflow: str, start_agent: str, given: Sequence[Any],
               items: Sequence[Any],
               decisions: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The document ``RunConfig(record=PATH)`` writes: what the run was given (a
    session's earlier turns included) and the items it made, as records."""
    from stepswitch.runtime.state_json import _item

    return {"format": RECORD_FORMAT, "version": 1, "workflow": workflow,
            "start_agent": start_agent, "input": [_item(i) for i in given],
            "items": [_item(i) for i in items],
            "decisions": {k: {"approved": d.approved, "message": d.message}
                          for k, d in sorted((decisions or {}).items())}}


def run_doc(result: Any, workflow: str) -> dict[str, Any]:
    """``result``'s run (input and new items) as the record document."""
    start: str = next((i.agent for i in result.new_items
                       if isinstance(getattr(i, "agent", None), str)), result.last_agent)
    return record_doc(workflow, start, result.input, result.new_items,
                      result.to_state().decisions)


def write_doc(path: str | os.PathLike[str], doc: Mapping[str, Any]) -> None:
    body = json.dumps(doc, indent=1, ensure_ascii=False)
    with open(path, "w", encoding="utf-8") as f:
        f.write(body + "\n")


def write_record(path: str | os.PathLike[str], result: Any, workflow: str) -> None:
    """Write ``result``'s run to ``path``."""
    write_doc(path, run_doc(result, workflow))
