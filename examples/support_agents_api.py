"""The support workflow on OpenAI's hosted Agents API, from the command line, against the
bundled scripted server (``stepswitch.testing.AgentsAPIServer``) on 127.0.0.1.

``stepswitch run --api agents`` checks the workflow for the API (SW650-SW654), creates a
session, answers each ``requires_action`` with a ``tool_result`` under the same
``(turn_id, call_id)``, updates the session's agent at the handoff, approves the refund,
and prints the answer. Then ``stepswitch trail`` checks the session's own item list.
To use the real API, drop the server and pass no ``--base-url`` (``OPENAI_API_KEY``).

Run: .venv/bin/python examples/support_agents_api.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for graphs.support

from stepswitch.cli.main import main  # noqa: E402
from stepswitch.models.script import Reply, call, message  # noqa: E402
from stepswitch.testing import AgentsAPIServer  # noqa: E402

SCRIPT = [  # the hosted model's answers, one per model call, with the tokens it reports
    Reply((call("lookup_order", {"order_id": 42}),), 210, 18),
    Reply((message("Let me pass you to our refund specialist."),
           call("transfer_to_refund", {})), 260, 24),
    Reply((call("process_refund", {"order_id": 42, "reason": "arrived damaged"}),), 240, 30),
    Reply((message("Done: order 42 is refunded in full."),), 300, 12),
]


def run() -> int:
    with AgentsAPIServer(SCRIPT) as server:
        print(f"== stepswitch run --api agents, against {server.url}", flush=True)
        code = main(["run", str(ROOT / "graphs" / "support.py") + ":support", "--api", "agents",
                     "--base-url", server.url, "--model", "gpt-4.1", "--approve", "all",
                     "--input", "I want a refund for order 42, it arrived damaged"])
        if code != 0:
            return code
        server.assert_complete()
        session = server.session()
        items = server.items()
        print(f"== session {session['id']}: {len(items)} items, status {session['status']}")
        for item in items:
            pair = f"({item['turn_id']}, {item['call_id']})" if "call_id" in item else ""
            print(f"   {item['type']:<22} {item.get('name') or item.get('role') or ''} {pair}")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "session.json"
            path.write_text(json.dumps({"session": session, "items": items}), "utf-8")
            print("== stepswitch trail: every call answered once, by its own pair", flush=True)
            return main(["trail", str(path)])


if __name__ == "__main__":
    sys.exit(run())
