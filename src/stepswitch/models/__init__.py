"""Real models: OpenAI's Responses and Chat Completions APIs through the official
``openai`` client (any OpenAI-compatible server through ``base_url``), and
``OpenAIServer``, a scripted OpenAI-compatible server for tests over real HTTP.

Names load on first use, so importing ``stepswitch`` (or ``stepswitch.models``)
does not import the ``openai`` client until a model is made.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepswitch.models.openai_chat import OpenAIChatCompletionsModel
    from stepswitch.models.openai_responses import OpenAIResponsesModel
    from stepswitch.models.openai_server import OpenAIServer, RecordedRequest
    from stepswitch.models.provider import OpenAIProvider, TranscriptModel

__all__ = [
    "OpenAIChatCompletionsModel",
    "OpenAIProvider",
    "OpenAIResponsesModel",
    "OpenAIServer",
    "RecordedRequest",
    "TranscriptModel",
]

_HOME = {
    "OpenAIChatCompletionsModel": "stepswitch.models.openai_chat",
    "OpenAIProvider": "stepswitch.models.provider",
    "OpenAIResponsesModel": "stepswitch.models.openai_responses",
    "OpenAIServer": "stepswitch.models.openai_server",
    "RecordedRequest": "stepswitch.models.openai_server",
    "TranscriptModel": "stepswitch.models.provider",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'stepswitch.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
