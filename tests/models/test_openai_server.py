"""OpenAIServer on its own: lifecycle, recording, bounds, errors, JSON script steps."""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Any

import pytest

from stepswitch.errors import UserError
from stepswitch.models import OpenAIServer
from stepswitch.models.script import call, error_reply, message


def post(
    server: OpenAIServer,
    path: str,
    body: Any,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    payload = raw if raw is not None else json.dumps(body).encode()
    conn.request("POST", path, payload, {"Content-Type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data


def test_context_manager_binds_loopback_and_releases_the_port() -> None:
    with OpenAIServer([[message("hi")]]) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
        port = server.port
        status, _, data = post(
            server,
            "/v1/chat/completions",
            {"model": "m", "messages": [{"role": "user", "content": "x"}]},
        )
        assert status == 200
        assert json.loads(data)["choices"][0]["message"]["content"] == "hi"
    assert not server.running
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 1):
        pass


def test_records_path_headers_and_json_body() -> None:
    with OpenAIServer([[message("a")]]) as server:
        post(server, "/v1/responses", {"model": "m", "input": "hello"}, {"X-Trace": "t1"})
    [req] = server.requests
    assert (req.method, req.path, req.api) == ("POST", "/v1/responses", "responses")
    assert req.headers["x-trace"] == "t1"
    assert req.body == {"model": "m", "input": "hello"}
    assert not req.stream


def test_exhausted_script_is_a_400_and_fails_assert_complete() -> None:
    with OpenAIServer([[message("only one")]]) as server:
        post(server, "/v1/responses", {"model": "m", "input": "x"})
        status, _, data = post(server, "/v1/responses", {"model": "m", "input": "x"})
    assert status == 400
    assert "script exhausted" in json.loads(data)["error"]["message"]
    with pytest.raises(AssertionError, match="no scripted step left"):
        server.assert_complete()


def test_unused_steps_fail_assert_complete() -> None:
    with OpenAIServer([[message("a")], [message("b")]]) as server:
        post(server, "/v1/responses", {"model": "m", "input": "x"})
    assert server.remaining == 1
    with pytest.raises(AssertionError, match="1 scripted step"):
        server.assert_complete()


def test_error_step_has_openai_body_and_retry_headers() -> None:
    with OpenAIServer([error_reply(429, retry_after=1.5)]) as server:
        status, headers, data = post(server, "/v1/responses", {"model": "m", "input": "x"})
    assert status == 429
    assert headers["retry-after"] == "1.5" and headers["retry-after-ms"] == "1500"
    assert json.loads(data)["error"]["type"] == "rate_limit_exceeded"


def test_api_key_is_enforced_when_given() -> None:
    with OpenAIServer([[message("ok")]], api_key="sekrit") as server:
        status, _, _ = post(
            server, "/v1/responses", {"model": "m", "input": "x"}, {"Authorization": "Bearer wrong"}
        )
        assert status == 401
        assert server.remaining == 1  # a refused request uses no step
        status, _, _ = post(
            server,
            "/v1/responses",
            {"model": "m", "input": "x"},
            {"Authorization": "Bearer sekrit"},
        )
        assert status == 200


def test_unknown_path_non_json_and_oversized_bodies_are_refused() -> None:
    with OpenAIServer([[message("unused")]], max_body_bytes=100) as server:
        assert post(server, "/v1/embeddings", {"input": "x"})[0] == 404
        assert post(server, "/v1/responses", None, raw=b"{nope")[0] == 400
        assert post(server, "/v1/responses", {"input": "x" * 200})[0] == 413
        assert server.remaining == 1


def test_request_count_is_bounded() -> None:
    with OpenAIServer([[message("a")]] * 3, max_requests=2) as server:
        statuses = [
            post(server, "/v1/responses", {"model": "m", "input": "x"})[0] for _ in range(3)
        ]
    assert statuses == [200, 200, 429]
    assert len(server.requests) == 2


def test_stops_itself_when_idle() -> None:
    server = OpenAIServer(idle_timeout=0.2).start()
    deadline = time.monotonic() + 5
    while server.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not server.running
    with server:  # it can be started again, on a new port
        assert server.running
        assert post(server, "/v1/embeddings", {})[0] == 404
    assert not server.running


def test_missing_call_ids_are_filled_deterministically() -> None:
    with OpenAIServer([[call("a"), call("b", {"x": 1}, "mine")]]) as server:
        _, _, data = post(server, "/v1/responses", {"model": "m", "input": "x"})
    out = json.loads(data)["output"]
    assert [o["call_id"] for o in out] == ["call_0_0", "mine"]


def test_responses_stream_is_sse_with_sequence_numbers() -> None:
    with OpenAIServer([[message("hello world")]], chunk_size=4) as server:
        status, headers, data = post(
            server, "/v1/responses", {"model": "m", "input": "x", "stream": True}
        )
    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = [
        json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")
    ]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["type"] == "response.completed"
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert deltas == ["hell", "o wo", "rld"]


def test_bad_script_steps_are_user_errors() -> None:
    with pytest.raises(UserError, match="OpenAIServer step 2"):
        OpenAIServer([[message("a")], 42])
    with pytest.raises(UserError, match=r"step 1\[1\]"):
        OpenAIServer([[message("a"), "text"]])


def test_client_helper_points_at_the_server() -> None:
    with OpenAIServer(api_key="k") as server:
        client = server.client(max_retries=0)
        assert str(client.base_url).rstrip("/") == server.url
        assert client.api_key == "k"


def test_pytest_fixture_is_registered(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.has_plugin("stepswitch")


def test_importing_stepswitch_and_its_cli_does_not_import_the_openai_client() -> None:
    import subprocess
    import sys

    code = (
        "import sys, stepswitch as ss, stepswitch.cli.main as cli; cli._parser(); "
        "from stepswitch.models.openai_server import OpenAIServer; "
        "print('openai' in sys.modules, ss.models.OpenAIServer is OpenAIServer)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["False", "True"]
