"""How fast the studio page for a 1,000-agent workflow loads in headless chromium.

The workflow is a chain: agent i has one tool and a handoff to agent i+1. The server is
started once (its data, the SVG included, is built before it listens: reported apart);
the figure is the time from ``page.goto`` to the diagram's nodes being in the page, best
of five fresh pages. The issue's bar: under 2 s.

    PYTHONPATH=src .venv/bin/python bench/bench_studio.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

from stepswitch.studio.server import Studio

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

SOURCE = '''
import stepswitch as ss


@ss.function_tool
def lookup(order_id: int) -> str:
    """Look an order up.

    Args:
        order_id: The order.
    """
    return str(order_id)


N = {n}
agents = [ss.Agent(name=f"agent_{{i}}", instructions=f"Step {{i}} of the chain.",
                   tools=[lookup],
                   handoffs=[ss.handoff(f"agent_{{i + 1}}")] if i + 1 < N else [])
          for i in range(N)]
chain = ss.Workflow(name="chain", entry=agents[0], agents=agents)
'''


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 1_000
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp, "chain.py")
        file.write_text(SOURCE.format(n=n))
        start = time.perf_counter()
        studio = Studio([f"{file}:chain"])
        built = time.perf_counter() - start
        server = studio.serve(0)
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        thread = threading.Thread(target=studio.run, args=(server,), daemon=True)
        thread.start()
        loads = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for _ in range(5):
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                t0 = time.perf_counter()
                page.goto(url)
                page.wait_for_selector("#canvas svg g.node")
                loads.append(time.perf_counter() - t0)
                count = page.locator("#canvas g.node").count()
                page.close()
            browser.close()
        server.shutdown()
        thread.join(5)
    size = len(studio.document) / 1e6
    print(f"studio, {n} agents ({count} nodes drawn): data + SVG built in {built:.2f} s "
          f"({size:.1f} MB); page load best {min(loads):.3f} s, worst {max(loads):.3f} s "
          f"(bar: < 2 s)")
    return 0 if min(loads) < 2.0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
