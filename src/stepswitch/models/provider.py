"""Turning a model *name* into a model: ``OpenAIProvider``, and ``TranscriptModel``,
which replays a script (``--model scripted:FILE.json``) in process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import openai

from stepswitch._json import loads
from stepswitch.errors import ModelBehaviorError, ModelProviderError, UserError
from stepswitch.models._convert import make_client
from stepswitch.models.openai_chat import OpenAIChatCompletionsModel, parse_completion
from stepswitch.models.openai_responses import OpenAIResponsesModel, parse_response
from stepswitch.models.script import (
    ErrorReply,
    RawReply,
    Reply,
    fill_call_ids,
    load_script,
    normalize_step,
    reply_usage,
)
from stepswitch.runtime.model import ModelRequest, ModelResponse, ResponseCompleted

__all__ = ["OpenAIProvider", "TranscriptModel"]


class OpenAIProvider:
    """Makes models by name, all sharing one client: ``provider.get_model("gpt-4.1")``.

    ``api`` picks the wire API (``"responses"``, OpenAI's newest, or ``"chat"``, which
    most OpenAI-compatible servers speak). The client comes from ``client``, else
    from ``api_key``/``base_url``, else from ``OPENAI_API_KEY``/``OPENAI_BASE_URL``.
    """

    def __init__(
        self,
        *,
        api: Literal["responses", "chat"] = "responses",
        client: openai.AsyncOpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> None:
        if api not in ("responses", "chat"):
            raise UserError(f"OpenAIProvider: api must be 'responses' or 'chat', got {api!r}")
        self.api = api
        self._client = client
        self._options: dict[str, Any] = {
            "api_key": api_key,
            "base_url": base_url,
            "max_retries": max_retries,
            "timeout": timeout,
        }
        self._ready = False

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The one client every model of this provider uses (made on first use)."""
        if not self._ready:
            if self._client is None:
                self._client = make_client(**self._options)
            else:
                options = {
                    k: self._options[k]
                    for k in ("max_retries", "timeout")
                    if self._options[k] is not None
                }
                if options:
                    self._client = self._client.with_options(**options)
            self._ready = True
        assert self._client is not None
        return self._client

    def get_model(self, name: str) -> OpenAIResponsesModel | OpenAIChatCompletionsModel:
        """The model called ``name`` on this provider's API and client."""
        cls = OpenAIChatCompletionsModel if self.api == "chat" else OpenAIResponsesModel
        return cls(name, self.client)


class TranscriptModel:
    """Replays a script in process, one step per model call (no HTTP).

    Error steps raise what the HTTP adapters raise for that status (401/403/404/400 a
    ``UserError``, others ``ModelProviderError``); raw steps are parsed as a Responses
    or Chat Completions body. A step's ``delay`` (``slow(...)``, ``"delay"`` in JSON)
    is waited out before it is answered, asynchronously: calls made at the same time (a
    response's agent tools) wait side by side, as they would on a slow server. Asking
    for more steps than the script holds is a ``UserError`` naming the script.
    """

    provider_name = "stepswitch.transcript"
    """``gen_ai.provider.name`` on this model's spans."""

    def __init__(self, steps: Iterable[Any], *, name: str = "transcript") -> None:
        self.name = name
        self.model = "transcript"
        self.steps = [normalize_step(s, where=f"{name}: step {i + 1}") for i, s in enumerate(steps)]
        self.requests: list[ModelRequest] = []
        self._used = 0

    @classmethod
    def from_file(cls, path: str | Path) -> TranscriptModel:
        """A transcript from a JSON script file (see ``docs/models.md``)."""
        return cls(load_script(path), name=str(path))

    def __repr__(self) -> str:
        return f"TranscriptModel({self.name!r}, {len(self.steps)} steps)"

    @property
    def remaining(self) -> int:
        return len(self.steps) - self._used

    def skip(self, n: int) -> None:
        """Start ``n`` steps later (a resumed run already made ``n`` model calls)."""
        self._used = min(len(self.steps), self._used + max(0, n))

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        n = self._used
        if n >= len(self.steps):
            raise UserError(
                f"{self.name}: the script has {len(self.steps)} step(s), but the run made "
                f"model call {n + 1} (agent {request.agent!r}); add a step"
            )
        self.requests.append(request)
        self._used += 1
        step = self.steps[n]
        where = f"{self.name}: step {n + 1}"
        if step.delay:
            # the step is taken first: a call made meanwhile gets the next one
            await asyncio.sleep(step.delay)
        if isinstance(step, ErrorReply):
            message = f"{where}: scripted HTTP {step.status}: {step.message}"
            if step.status in (400, 401, 403, 404, 409, 422):
                raise UserError(message)
            raise ModelProviderError(message, status=step.status)
        if isinstance(step, RawReply):
            return _parse_raw(step, where)
        used = {c for i in request.input if isinstance(c := getattr(i, "call_id", None), str)}
        return _reply_response(step, n, used.__contains__)

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        yield ResponseCompleted(await self.get_response(request))


def _reply_response(reply: Reply, n: int, taken: Callable[[str], bool]) -> ModelResponse:
    filled = fill_call_ids(reply, n, taken)
    return ModelResponse(filled.output, reply_usage(filled), f"transcript_{n}")


def _parse_raw(step: RawReply, where: str) -> ModelResponse:
    try:
        data = loads(step.body)
    except ValueError as exc:
        raise ModelBehaviorError(f"{where}: the response is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ModelBehaviorError(f"{where}: the response is not a JSON object")
    return parse_completion(data) if "choices" in data else parse_response(data)
