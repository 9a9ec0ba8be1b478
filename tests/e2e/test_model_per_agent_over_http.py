"""A model per agent and per run, over real HTTP: an agent with a model object uses it
(here another server on the other API); an agent with a model name is served by the
run's model under that name."""

from __future__ import annotations

from pydantic import BaseModel

import stepswitch as ss
from stepswitch.models import OpenAIChatCompletionsModel, OpenAIResponsesModel, OpenAIServer
from stepswitch.models.script import call, message


class Answer(BaseModel):
    text: str


def test_agent_models_and_the_run_model_each_get_their_calls() -> None:
    with OpenAIServer() as run_server, OpenAIServer() as chat_server:
        expert_model = OpenAIChatCompletionsModel("expert-model", chat_server.client())
        expert = ss.Agent(
            name="expert", instructions="Answer precisely.", output_type=Answer, model=expert_model
        )
        helper = ss.Agent(name="helper", instructions="Help.", model="gpt-mini")
        front = ss.Agent(
            name="front",
            instructions="Route.",
            tools=[expert.as_tool("ask_expert", "Ask the expert")],
            handoffs=[helper],
        )
        machine = ss.Workflow(
            name="per_agent", entry=front, agents=[front, expert, helper]
        ).compile()

        run_server.add(
            [call("ask_expert", {"input": "what is 6*7?"})],
            [call("transfer_to_helper", {})],
            [message("It is 42.")],
        )
        chat_server.add([message('{"text": "42"}')])
        result = machine.run_sync(
            "6*7?", model=OpenAIResponsesModel("gpt-run", run_server.client())
        )

    assert result.final_output == "It is 42."
    assert result.last_agent == "helper"
    assert [r.body["model"] for r in run_server.requests] == ["gpt-run", "gpt-run", "gpt-mini"]
    assert all(r.api == "responses" for r in run_server.requests)
    [expert_call] = chat_server.requests
    assert expert_call.api == "chat" and expert_call.body["model"] == "expert-model"
    assert expert_call.body["response_format"]["json_schema"]["name"] == "Answer"
    assert expert_call.body["messages"][1] == {"role": "user", "content": "what is 6*7?"}
    run_server.assert_complete()
    chat_server.assert_complete()
