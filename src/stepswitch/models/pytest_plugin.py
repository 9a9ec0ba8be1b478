"""A pytest plugin (registered as ``stepswitch`` under ``pytest11``): the
``openai_server`` fixture, a started :class:`OpenAIServer` with an empty script.

    def test_refund(openai_server):
        openai_server.add([call("lookup_order", {"order_id": 42})], [message("Done.")])
        model = OpenAIResponsesModel("gpt-4.1", openai_server.client())
        ...
        openai_server.assert_complete()
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stepswitch.models.openai_server import OpenAIServer

__all__ = ["openai_server"]


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1, closed after the test."""
    with OpenAIServer(idle_timeout=120.0) as server:
        yield server
