"""A pytest plugin (registered as ``stepswitch`` under ``pytest11``): the
``openai_server`` fixture, a started :class:`OpenAIServer` with an empty script.

    def test_refund(openai_server):
        openai_server.add([call("lookup_order", {"order_id": 42})], [message("Done.")])
        model = OpenAIResponsesModel("gpt-4.1", openai_server.client())
        ...
        openai_server.assert_complete()

pytest loads every installed ``pytest11`` plugin at start-up, in every project, so this
module imports nothing of stepswitch until the fixture is used: a test session that
never asks for ``openai_server`` pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from stepswitch.models.openai_server import OpenAIServer

__all__ = ["openai_server"]


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1, closed after the test."""
    from stepswitch.models.openai_server import OpenAIServer

    with OpenAIServer(idle_timeout=120.0) as server:
        yield server
