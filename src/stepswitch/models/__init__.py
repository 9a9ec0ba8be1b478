"""Real models: OpenAI's Responses and Chat Completions APIs through the official
``openai`` client (any OpenAI-compatible server through ``base_url``), the hosted
Agents API (``AgentsAPIModel``), and scripted servers of their wire formats for tests
over real HTTP (``OpenAIServer``, ``AgentsAPIServer``).

Names load on first use, so importing ``stepswitch`` (or ``stepswitch.models``)
does not import the ``openai`` client until a model is made.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepswitch.models.agents_api import AgentsAPIModel
    from stepswitch.models.agents_api_server import AgentsAPIServer
    from stepswitch.models.openai_chat import OpenAIChatCompletionsModel
    from stepswitch.models.openai_responses import OpenAIResponsesModel
    from stepswitch.models.openai_server import OpenAIServer, RecordedRequest
    from stepswitch.models.provider import OpenAIProvider, TranscriptModel

__all__ = [
    "AgentsAPIModel",
    "AgentsAPIServer",
    "OpenAIChatCompletionsModel",
    "OpenAIProvider",
    "OpenAIResponsesModel",
    "OpenAIServer",
    "RecordedRequest",
    "TranscriptModel",
]

_HOME = {
    "AgentsAPIModel": "stepswitch.models.agents_api",
    "AgentsAPIServer": "stepswitch.models.agents_api_server",
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
