"""A server that answers 200 with something that is no Agents API event stream.

Retrying cannot mend such an answer, so it is a ``ModelBehaviorError`` naming the model
and the base URL, as the other adapters say of a malformed body; a stream that is cut
before it named its session stays a ``ModelProviderError`` (retry the run).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import openai
import pytest

import stepswitch as ss
from stepswitch.models import AgentsAPIModel, AgentsAPIServer, OpenAIResponsesModel
from stepswitch.models.agents_api_server import Fault
from stepswitch.models.script import message
from tests.agents_api.conftest import model_on
from tests.agents_api.raw_server import RawServer
from tests.cli.conftest import MODEL_ENV, run_main

NOT_A_STREAM = {
    "html": (b"<html><body>Welcome to nginx!</body></html>", "text/html"),
    "wrong-shaped JSON": (b'{"id":5,"status":7}', "application/json"),
    "an SSE event never ended": (b"data: {not json}", "text/event-stream"),
    "SSE events of no type": (b'data: {"foo": 1}\n\ndata: {"bar": 2}\n\n', "text/event-stream"),
}


def _machine() -> ss.StateMachine:
    agent = ss.Agent(name="a", instructions="Answer.")
    return ss.Workflow("w", entry=agent, agents=[agent]).compile()


def _client(url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0)


@pytest.mark.parametrize("body, content_type", NOT_A_STREAM.values(), ids=NOT_A_STREAM.keys())
def test_an_answer_that_is_no_event_stream_is_a_malformed_response_naming_model_and_url(
    body: bytes, content_type: str
) -> None:
    with RawServer(body, content_type) as server:
        with pytest.raises(ss.ModelBehaviorError) as caught:
            _machine().run_sync("hi", model=AgentsAPIModel("gpt-5", _client(server.url)))
        text = str(caught.value)
        assert text.startswith(f"model 'gpt-5' at {server.url}/: malformed response: "), text
        assert "retry" not in text and "\n" not in text
        assert caught.value.run_data is not None
        assert server.hits == 1  # one create; nothing was retried or polled


def test_it_is_said_as_the_responses_adapter_says_it_on_the_same_server() -> None:
    body, content_type = NOT_A_STREAM["wrong-shaped JSON"]
    with RawServer(body, content_type) as server:
        said = []
        for model in (AgentsAPIModel("gpt-5", _client(server.url)),
                      OpenAIResponsesModel("gpt-5", _client(server.url))):
            with pytest.raises(ss.ModelBehaviorError) as caught:
                _machine().run_sync("hi", model=model)
            said.append(str(caught.value).split(": malformed response: ")[0])
    assert said == [f"model 'gpt-5' at {server.url}/"] * 2


def test_a_create_stream_cut_before_any_event_is_still_a_provider_error(
    server: AgentsAPIServer,
) -> None:
    server.faults.append(Fault("stream_drop", nth=1, after=0))
    server.add([message("never read")])
    with pytest.raises(ss.ModelProviderError) as caught:
        _machine().run_sync("hi", model=model_on(server, max_retries=0))
    assert "event stream broke before the session was created; retry the run" in str(
        caught.value)


def test_the_cli_says_it_in_one_line_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in MODEL_ENV:
        monkeypatch.delenv(name, raising=False)
    app = tmp_path / f"plain_{uuid.uuid4().hex[:8]}.py"
    app.write_text("import stepswitch as ss\n"
                   "wf = ss.Workflow('w', entry=ss.Agent(name='a', instructions='x'))\n",
                   encoding="utf-8")
    body, content_type = NOT_A_STREAM["html"]
    with RawServer(body, content_type) as server:
        code, _out, err = run_main(["run", f"{app}:wf", "--api", "agents", "--base-url",
                                    server.url, "--model", "gpt-5", "--input", "hi"], capsys)
    assert code == 1, err
    [line] = [x for x in err.splitlines() if x.startswith("stepswitch: error:")]
    assert f"model 'gpt-5' at {server.url}/: malformed response: " in line
    assert "is no Agents API event stream" in line
