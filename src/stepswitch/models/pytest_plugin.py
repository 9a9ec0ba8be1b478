"""A pytest plugin (registered as ``stepswitch`` under ``pytest11``): the
``openai_server`` fixture, a started :class:`OpenAIServer` with an empty script.

    def test_refund(openai_server):
        openai_server.add([call("lookup_order", {"order_id": 42})], [message("Done.")])
        model = OpenAIResponsesModel("gpt-4.1", openai_server.client())
        ...
        openai_server.assert_complete()

pytest loads every installed ``pytest11`` plugin at start-up, in every project, so this
module imports nothing of stepswitch until the fixture is used: a test session that
never asks for ``openai_server`` pays nothing for it. It also collects recorded cases
(``*.trail.json``, see ``stepswitch test``) as test items, each replayed on today's
workflow when it runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from stepswitch.models.openai_server import OpenAIServer

__all__ = ["TrailCaseItem", "openai_server", "pytest_collect_file"]


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1, closed after the test."""
    from stepswitch.models.openai_server import OpenAIServer

    with OpenAIServer(idle_timeout=120.0) as server:
        yield server


# -- recorded cases: every *.trail.json is a test item ------------------------------------


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A ``*.trail.json`` file (a recorded case, see ``stepswitch test``) is collected as
    one test that replays it on today's workflow."""
    if file_path.name.endswith(".trail.json"):
        collected: pytest.Collector = TrailCaseFile.from_parent(parent, path=file_path)
        return collected
    return None


class TrailCaseFailed(AssertionError):
    """A recorded case's expectations do not hold."""


class TrailCaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield TrailCaseItem.from_parent(self, name=self.path.name)


class TrailCaseItem(pytest.Item):
    def runtest(self) -> None:
        from stepswitch.review.cases import CaseError, run_case

        try:
            result = run_case(self.path)
        except CaseError as exc:
            raise TrailCaseFailed(str(exc)) from None
        if not result.ok:
            raise TrailCaseFailed("\n".join(result.failures))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, TrailCaseFailed):
            text = str(excinfo.value)  # a case that cannot run names its file already
            return text if text.startswith(f"{self.path}:") else f"{self.path}: {text}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"recorded case {self.path.name}"
