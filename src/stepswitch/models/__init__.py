"""Real models: OpenAI's Responses and Chat Completions APIs through the official
``openai`` client (any OpenAI-compatible server through ``base_url``), and
``OpenAIServer``, a scripted OpenAI-compatible server for tests over real HTTP.
"""

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
