"""Issue 23, item 12: a run's input that is neither text nor input items fails the run
for good, at construction and in the workflow's first step (not a workflow task that
Temporal retries forever before stepswitch code runs)."""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

import stepswitch as ss
from stepswitch.errors import UserError
from stepswitch.temporal import RunInput, RunOutput, worker_for, workflow_name
from stepswitch.testing import ScriptedModel, assistant_message
from tests.conformance.kit import compile_agents


@pytest.mark.parametrize(("value", "problem"), [
    (12345, "RunInput.input: expected the user's text (a string) or a list of input items "
            "(dicts), got int"),
    (None, "got NoneType"),
    (["hi"], "RunInput.input[0]: expected an input item as a dict"),
    ([{"role": "user", "content": "hi"}, 3], "RunInput.input[1]:"),
])
def test_run_input_is_checked_when_made(value: Any, problem: str) -> None:
    with pytest.raises(UserError, match=re.escape(problem)):
        RunInput(value)


def test_text_and_items_make_a_run_input() -> None:
    assert RunInput("hi").input == "hi"
    items = [{"role": "user", "content": "hi"}]
    assert RunInput(items).input == items


def test_a_bad_input_sent_as_json_fails_the_run_for_good(dev_server: str) -> None:
    machine = compile_agents(ss.Agent("a"))
    queue = f"bad-input-{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        client = await Client.connect(dev_server)
        model = ScriptedModel([[assistant_message("hello")]])
        async with worker_for(client, machine, task_queue=queue, model=model):
            # what RunInput(12345) would send, had it been made (another SDK's client,
            # a hand-written payload): the workflow, not the decoder, refuses it
            for sent, problem in (({"input": 12345}, "RunInput.input: expected"),
                                  (12345, "expected a RunInput (a JSON object), got int"),
                                  ({"input": "hi", "max_turns": "x"}, "max_turns")):
                handle = await client.start_workflow(
                    workflow_name(machine), sent, id=f"bad-{uuid.uuid4().hex}",
                    task_queue=queue, result_type=RunOutput,
                )
                with pytest.raises(WorkflowFailureError) as failed:
                    await asyncio.wait_for(handle.result(), timeout=10)
                cause = failed.value.cause
                assert isinstance(cause, ApplicationError)
                assert cause.type == "UserError" and cause.non_retryable
                assert cause.message.startswith("the run's input is not a RunInput: ")
                assert problem in cause.message
            # a good input runs on the same worker
            done = await client.execute_workflow(
                workflow_name(machine), RunInput("hi"), id=f"ok-{uuid.uuid4().hex}",
                task_queue=queue, result_type=RunOutput,
            )
            assert done.final_output == "hello"

    asyncio.run(go())
