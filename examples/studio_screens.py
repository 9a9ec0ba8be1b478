"""Screenshots of the studio page for the support workflow, in headless chromium.

    python examples/studio_screens.py OUT_DIR

Runs the support workflow on its scripted model until it pauses for approval (the
recorded run), serves the studio on a free port of 127.0.0.1, and writes
``studio-agent.png`` (the refund agent selected), ``studio-run.png`` (the third turn of
the run: a handoff) and ``studio-diff.png`` (its handoff budget raised in a copy) to
OUT_DIR. ``make demo`` writes them to out/; docs/studio.md shows the ones in docs/.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

from stepswitch.studio.server import Studio

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def _serve(args: list[str]) -> tuple[Studio, ThreadingHTTPServer, str]:
    studio = Studio(args)
    server = studio.serve(0)
    threading.Thread(target=studio.run, args=(server,), daemon=True).start()
    return studio, server, f"http://127.0.0.1:{server.server_address[1]}/"


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    out = Path(argv[0] if argv else "out")
    out.mkdir(parents=True, exist_ok=True)
    support = f"{ROOT / 'graphs' / 'support.py'}:support"
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp, "support_state.json")
        subprocess.run([sys.executable, str(ROOT / "examples" / "support_run.py"), "--state",
                        str(state)], check=True, capture_output=True, cwd=ROOT)
        head = Path(tmp, "support_head.py")
        head.write_text((ROOT / "graphs" / "support.py").read_text().replace(
            'ss.handoff("triage", max_uses=2)', 'ss.handoff("triage", max_uses=3)'))
        _, run_server, run_url = _serve([support, "--trail", str(state)])
        _, diff_server, diff_url = _serve([support, f"{head}:support"])
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(run_url)
            page.wait_for_selector("#canvas svg g.node")
            page.click("#canvas g.node:has(text:text-is('refund'))")
            page.screenshot(path=str(out / "studio-agent.png"))
            page.locator("#canvas").focus()
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
            page.screenshot(path=str(out / "studio-run.png"))
            page.goto(diff_url)
            page.wait_for_selector("#canvas svg g.node")
            page.click(".tabs button[data-tab='diff']")
            page.screenshot(path=str(out / "studio-diff.png"))
            browser.close()
        for server in (run_server, diff_server):
            server.shutdown()
    print(f"wrote {out}/studio-agent.png, studio-run.png, studio-diff.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
