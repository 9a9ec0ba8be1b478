"""A headless Debian chromium driven by Playwright (never a browser download), one per
test module, and studio servers started in-process on a free port."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from stepswitch.studio.server import Studio

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (make test does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Served:
    def __init__(self, args: Sequence[str], poll: float = 0.5) -> None:
        self.studio = Studio(args, poll=poll)
        self.server = self.studio.serve(0)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.studio.run, args=(self.server,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.thread.join(5)


def serve(args: Sequence[str], poll: float = 0.5) -> Served:
    return Served(args, poll)


POLICY_FAILS = '''
import stepswitch as ss


@ss.function_tool
def refund(order_id: int) -> str:
    """Refund an order."""
    return "done"


back = ss.Agent("back", "b", tools=[refund])
side = ss.Agent("side", "s")
front = ss.Agent("front", "f", handoffs=[back, side])
wf = ss.Workflow("w", front, [front, back, side], policies=[ss.require_approval(refund)])
'''
"""A workflow whose ``require_approval`` policy fails through a handoff: ``front`` hands
off to ``back``, which calls ``refund`` with no approval; ``side`` is off the path."""
