"""The part both OpenAI adapters share: the model name and the client. Not public API."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import openai

from stepswitch.models._convert import make_client
from stepswitch.runtime.model import ModelRequest

__all__ = ["OpenAIModelBase"]

# the http client type the openai client makes for itself when given none: only that
# one is replaced by a fresh pool (a caller's own http_client may carry proxies etc.)
_OWN_HTTP_CLIENT: Any = getattr(openai._base_client, "AsyncHttpxClientWrapper", None)


# the loop each configured client first served (shared by every model using it)
_HOME_LOOP: weakref.WeakKeyDictionary[Any, weakref.ref[asyncio.AbstractEventLoop]] = (
    weakref.WeakKeyDictionary()
)


def _owns_its_http_client(client: openai.AsyncOpenAI) -> bool:
    own = type(getattr(client, "_client", None))
    return _OWN_HTTP_CLIENT is not None and own is _OWN_HTTP_CLIENT


class OpenAIModelBase:
    """Holds the model name and the ``AsyncOpenAI`` client (made lazily if not given)."""

    api = "base"
    provider_name = "openai"
    """``gen_ai.provider.name`` on this model's spans."""

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
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._per_loop = weakref.WeakKeyDictionary()

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

    def _client_here(self) -> openai.AsyncOpenAI:
        """The client for the running event loop.

        httpx keeps connections in a pool bound to the loop that made them; after
        ``asyncio.run`` closes that loop, reusing one fails with "Event loop is
        closed". So the configured client serves the first loop only, and every other
        loop gets a copy of it (same key, URL, headers, retries, timeout) with a pool
        of its own. A client given with a custom ``http_client`` is used as is.
        """
        base = self.client
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return base
        found = self._per_loop.get(loop)
        if found is not None:
            return found
        home = _HOME_LOOP.get(base)
        if home is None or home() is loop:
            _HOME_LOOP[base] = weakref.ref(loop)
            chosen = base
        elif _owns_its_http_client(base):
            chosen = base.copy(http_client=openai.DefaultAsyncHttpxClient())
        else:
            chosen = base
        self._per_loop[loop] = chosen
        return chosen

    def _name(self, request: ModelRequest) -> str:
        return request.model or self.model
