"""Issue 23, item 16: a run's summary counts the model calls the loop made, also with a
model of the user's own (``--model FILE.py:NAME``) whose responses report no usage."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import stepswitch as ss
from stepswitch.cli.main import main
from stepswitch.runtime.model import ModelRequest, ModelResponse
from stepswitch.testing import assistant_message, function_call

APP = textwrap.dedent('''
    import stepswitch as ss

    @ss.function_tool
    def lookup_order(order_id: int) -> str:
        """Look up an order."""
        return f"order {order_id} shipped"

    desk = ss.Agent("desk", tools=[lookup_order])
    support = ss.Workflow("support", entry=desk, agents=[desk])
''')

MODEL = textwrap.dedent('''
    from stepswitch.runtime.model import ModelResponse
    from stepswitch.testing import assistant_message, function_call


    class Lookup:
        """Looks the order up, then answers: two calls, no usage reported."""

        async def get_response(self, request):
            if any(i.type == "tool_call_output_item" for i in request.input):
                return ModelResponse((assistant_message("it shipped"),))
            return ModelResponse((function_call("lookup_order", {"order_id": 7}),))


    model = Lookup()
''')


def test_the_summary_counts_calls_of_a_model_that_reports_no_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "summary_app.py").write_text(APP)
    (tmp_path / "summary_model.py").write_text(MODEL)
    code = main(["run", f"{tmp_path}/summary_app.py:support", "--input", "where is 7?",
                 "--model", f"{tmp_path}/summary_model.py:model"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "it shipped\n"
    assert err.splitlines()[-1] == "done: last agent desk, 2 model call(s), 0 token(s)"


class _Silent:
    """A model whose responses carry the default, empty usage."""

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        if any(i.type == "tool_call_output_item" for i in request.input):
            return ModelResponse((assistant_message("done"),))
        return ModelResponse((function_call("lookup_order", {"order_id": 7}),))


def test_the_runs_usage_counts_each_call_once() -> None:
    @ss.function_tool
    def lookup_order(order_id: int) -> str:
        """Look up an order."""
        return "ok"

    desk = ss.Agent("desk", tools=[lookup_order])
    machine = ss.Workflow("w", entry=desk, agents=[desk]).compile()
    assert machine.run_sync("hi", model=_Silent()).usage.requests == 2
    # a model that reports its requests is taken at its word
    scripted = ss.testing.ScriptedModel([[function_call("lookup_order", {"order_id": 7})],
                                         [assistant_message("done")]])
    assert machine.run_sync("hi", model=scripted).usage.requests == 2
