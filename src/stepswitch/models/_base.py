"""The part both OpenAI adapters share: the model name and the client. Not public API."""

from __future__ import annotations

from typing import Any

import openai

from stepswitch.models._convert import make_client
from stepswitch.runtime.model import ModelRequest

__all__ = ["OpenAIModelBase"]


class OpenAIModelBase:
    """Holds the model name and the ``AsyncOpenAI`` client (made lazily if not given)."""

    api = "base"

    def __init__(
        self,
        model: str,
        client: openai.AsyncOpenAI | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> None:
        self.model = model
        self._given = client
        self._client: openai.AsyncOpenAI | None = None
        self._api_key = api_key
        self._base_url = base_url
        self.max_retries = max_retries
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The client in use (made on first use when none was given)."""
        if self._client is None:
            if self._given is not None:
                options: dict[str, Any] = {}
                if self.max_retries is not None:
                    options["max_retries"] = self.max_retries
                if self.timeout is not None:
                    options["timeout"] = self.timeout
                self._client = self._given.with_options(**options) if options else self._given
            else:
                self._client = make_client(
                    api_key=self._api_key,
                    base_url=self._base_url,
                    max_retries=self.max_retries,
                    timeout=self.timeout,
                )
        return self._client

    def _name(self, request: ModelRequest) -> str:
        return request.model or self.model
