"""One Responses input item of every kind the Responses API and the Agents SDK put in a
conversation, each with the fields that a narrowing store loses (ids, statuses, content
parts, annotations, logprobs, encrypted reasoning, images and files, nulls, non-ASCII
text): what ``session_conformance`` round-trips through ``to_sdk_session``."""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["PNG", "responses_corpus"]

PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8Dw"
    "HwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)
"""A one-pixel PNG as a data URL."""

_CORPUS: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": [{"type": "input_text", "text": "Cite sources."}]},
    {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "Qu'y a-t-il sur cette image ? 🖼"},
        {"type": "input_image", "image_url": PNG, "detail": "high"},
        {"type": "input_image", "file_id": "file-img-1", "detail": "auto"},
        {"type": "input_file", "file_id": "file-pdf-2"},
        {"type": "input_file", "filename": "notes.txt",
         "file_data": "data:text/plain;base64,aGVsbG8="},
    ]},
    {"type": "reasoning", "id": "rs_01", "summary": [
        {"type": "summary_text", "text": "The user sent a one-pixel image."}],
     "content": [{"type": "reasoning_text", "text": "A 1x1 PNG."}],
     "encrypted_content": "gAAAAABo-opaque+/=", "status": "completed"},
    {"type": "message", "id": "msg_01", "role": "assistant", "status": "completed",
     "content": [
         {"type": "output_text", "text": "A single pixel [1].",
          "annotations": [
              {"type": "url_citation", "start_index": 15, "end_index": 18,
               "url": "https://example.com/pixel", "title": "Pixels"},
              {"type": "file_citation", "file_id": "file-pdf-2", "filename": "a.pdf",
               "index": 3},
              {"type": "container_file_citation", "container_id": "cntr_1",
               "file_id": "file-3", "filename": "out.csv", "start_index": 0,
               "end_index": 1},
              {"type": "file_path", "file_id": "file-4", "index": 0},
          ],
          "logprobs": [{"token": "A", "bytes": [65], "logprob": -0.0123,
                        "top_logprobs": [{"token": "A", "bytes": [65], "logprob": -0.0123},
                                         {"token": "One", "bytes": [79, 110, 101],
                                          "logprob": -4.5}]}]},
         {"type": "refusal", "refusal": "I won't guess the photographer."},
     ]},
    {"type": "function_call", "id": "fc_01", "call_id": "call_01", "name": "lookup",
     "arguments": "{\"q\": \"pixel\"}", "status": "completed"},
    {"type": "function_call_output", "id": "fco_01", "call_id": "call_01",
     "output": "{\"hits\": 3}", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_02", "output": [
        {"type": "input_text", "text": "a chart:"},
        {"type": "input_image", "image_url": PNG, "detail": "low"},
    ]},
    {"type": "function_call", "call_id": "call_h", "name": "transfer_to_refund",
     "arguments": "{}", "id": "fc_h"},
    {"type": "function_call_output", "call_id": "call_h",
     "output": "{\"assistant\": \"refund\"}"},
    {"type": "web_search_call", "id": "ws_01", "status": "completed",
     "action": {"type": "search", "query": "one pixel png"}},
    {"type": "file_search_call", "id": "fs_01", "status": "completed",
     "queries": ["pixel"], "results": [
         {"file_id": "file-pdf-2", "filename": "a.pdf", "score": 0.87, "text": "…",
          "attributes": {"page": 3}}]},
    {"type": "computer_call", "id": "cu_01", "call_id": "call_cu", "status": "completed",
     "action": {"type": "click", "button": "left", "x": 10, "y": 20},
     "pending_safety_checks": []},
    {"type": "computer_call_output", "call_id": "call_cu",
     "output": {"type": "computer_screenshot", "image_url": PNG},
     "acknowledged_safety_checks": [{"id": "sc_1", "code": "c", "message": "ok"}]},
    {"type": "code_interpreter_call", "id": "ci_01", "status": "completed",
     "code": "print(1)", "container_id": "cntr_1",
     "outputs": [{"type": "logs", "logs": "1\n"}]},
    {"type": "image_generation_call", "id": "ig_01", "status": "completed",
     "result": "iVBORw0KGgo="},
    {"type": "local_shell_call", "id": "ls_01", "call_id": "call_ls", "status": "completed",
     "action": {"type": "exec", "command": ["ls", "-l"], "env": {"LANG": "C"},
                "timeout_ms": 1000, "user": None, "working_directory": None}},
    {"type": "local_shell_call_output", "id": "call_ls", "output": "total 0\n"},
    {"type": "mcp_list_tools", "id": "ml_01", "server_label": "docs", "tools": [
        {"name": "search", "input_schema": {"type": "object", "properties": {}},
         "description": "Search docs", "annotations": None}]},
    {"type": "mcp_approval_request", "id": "mar_01", "server_label": "docs",
     "name": "search", "arguments": "{\"q\": \"x\"}"},
    {"type": "mcp_approval_response", "approval_request_id": "mar_01", "approve": True,
     "reason": None},
    {"type": "mcp_call", "id": "mc_01", "server_label": "docs", "name": "search",
     "arguments": "{\"q\": \"x\"}", "output": "found", "error": None},
    {"type": "custom_tool_call", "id": "ct_01", "call_id": "call_ct", "name": "grammar",
     "input": "SELECT 1"},
    {"type": "custom_tool_call_output", "call_id": "call_ct", "output": "1"},
    {"type": "item_reference", "id": "msg_00"},
    {"type": "compaction", "id": "cmp_01", "encrypted_content": "gAAAAABcompacted"},
    {"role": "assistant", "content": "a plain reply"},
    {"role": "user", "content": "thanks"},
]


def responses_corpus() -> list[dict[str, Any]]:
    """A fresh copy of the corpus (oldest first)."""
    return copy.deepcopy(_CORPUS)
