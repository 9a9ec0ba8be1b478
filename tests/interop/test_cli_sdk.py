"""TARGETs naming OpenAI Agents SDK agents in every command, and ``run --context``."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests._paths import ROOT
from tests.cli.conftest import run_main

APP = "tests/interop/sdk_apps/support.py"
REFUND = [
    {"output": [{"type": "function_call", "name": "transfer_to_refund_agent",
                 "arguments": {"reason": "late"}}]},
    {"output": [{"type": "function_call", "name": "process_refund",
                 "arguments": {"order_id": 7}}]},
]


@pytest.fixture(autouse=True)
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


def _script(tmp_path: Path, steps: Sequence[Mapping[str, object]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"steps": steps}))
    return f"scripted:{path}"


def test_check_an_sdk_agent_locates_findings_in_the_sdk_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_main(["check", "tests/interop/sdk_apps/hosted.py:researcher",
                        "--format", "json"], capsys)
    assert code == 0
    records = [json.loads(line) for line in out.splitlines() if line.strip()]
    text = json.dumps(records)
    assert "SW601" in text and "tests/interop/sdk_apps/hosted.py" in text


def test_show_and_render_an_sdk_agent(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["show", f"{APP}:triage_agent"], capsys)
    assert code == 0
    assert "Triage ─handoff→ Refund Agent via transfer_to_refund_agent" in out
    assert "Triage ─calls→ Order Expert via ask_expert" in out
    code, out, _ = run_main(["render", f"{APP}:triage_agent", "--format", "mermaid"], capsys)
    assert code == 0 and "transfer_to_refund_agent" in out and out.startswith("flowchart")


def test_a_folder_finds_the_root_sdk_agents(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(textwrap.dedent('''
        from agents import Agent
        billing = Agent(name="billing")
        front = Agent(name="front", handoffs=[billing])
    '''))
    (tmp_path / "uses.py").write_text("from app import front\n")  # imported, not declared
    code, out, _ = run_main(["show", str(tmp_path)], capsys)
    assert code == 0
    assert out.count("workflow 'front'") == 1 and "workflow 'billing'" not in out


def test_agents_that_hand_off_in_a_cycle_are_found_in_a_file_and_a_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # every agent of a closed cycle is reached by another, so none is a root: the app is
    # named by its first-declared agent, once, and checked like any other
    (tmp_path / "cyclic_sdk_app.py").write_text(textwrap.dedent('''
        from agents import Agent, handoff
        sales = Agent(name="sales", instructions="Sell.")
        support = Agent(name="support", instructions="Help.", handoffs=[sales])
        sales.handoffs = [handoff(support)]
        lonely = Agent(name="lonely", instructions="Alone.")
    '''))
    for target in (str(tmp_path / "cyclic_sdk_app.py"), str(tmp_path)):
        code, out, err = run_main(["show", target], capsys)
        assert code == 0, err
        assert out.count("workflow 'sales'") == 1 and "workflow 'support'" not in out
        assert "workflow 'lonely'" in out
        assert "sales ─handoff→ support" in out and "support ─handoff→ sales" in out
        code, out, _ = run_main(["check", target], capsys)
        assert code == 1 and "SW201" in out  # the unbudgeted cycle, as with module:attr


def test_an_sdk_input_filter_is_a_warning_at_the_handoff(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "filtered_sdk_app.py").write_text(textwrap.dedent('''
        from agents import Agent, handoff
        def only_messages(data):
            return data.clone(pre_handoff_items=())
        billing = Agent(name="billing", instructions="Bill.")
        front = Agent(name="front", instructions="Front.", handoffs=[
            handoff(billing, input_filter=only_messages)])
    '''))
    code, out, _ = run_main(["check", str(tmp_path / "filtered_sdk_app.py")], capsys)
    assert code == 0  # a warning: the workflow checks and draws; the handoff cannot run
    lines = [x for x in out.splitlines() if ": SW603 [" in x]
    assert len(lines) == 1, out
    line = lines[0]
    assert line.startswith(f"{tmp_path}/filtered_sdk_app.py:6:1: SW603 [warning]"), line
    assert "filtered_sdk_app:only_messages" in line


def test_the_sdk_s_own_remove_all_tools_filter_runs_as_stepswitch_s(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The SDK's most common filter is read as stepswitch's own: no SW603, and the agent
    handed to sees the messages only (a run that took the handoff failed)."""
    import json

    (tmp_path / "no_tools_sdk_app.py").write_text(textwrap.dedent('''
        from agents import Agent, function_tool, handoff
        from agents.extensions import handoff_filters

        @function_tool
        def lookup(order_id: int) -> str:
            """Look an order up."""
            return "shipped"

        billing = Agent(name="billing", instructions="Bill.")
        front = Agent(name="front", instructions="Front.", tools=[lookup], handoffs=[
            handoff(billing, input_filter=handoff_filters.remove_all_tools)])
    '''))
    code, out, _ = run_main(["check", "--no-cache", str(tmp_path / "no_tools_sdk_app.py")],
                            capsys)
    assert code == 0 and "SW603" not in out, out
    from stepswitch.interop.sdk import from_sdk
    from stepswitch.targets.load import import_file
    from stepswitch.testing import ScriptedModel, assistant_message, function_call

    module = import_file(tmp_path / "no_tools_sdk_app.py")
    machine = from_sdk(module.front).compile()
    model = ScriptedModel([
        [assistant_message("Let me look."), function_call("lookup", {"order_id": 1})],
        [function_call("transfer_to_billing", {})],
        [assistant_message("Billing here.")],
    ])
    done = machine.run_sync("where is order 1?", model=model)
    assert done.final_output == "Billing here." and done.last_agent == "billing"
    seen = [getattr(i, "type", "") for i in model.calls[2].input]
    assert seen == ["user_input_item", "message_output_item"], seen
    assert json.dumps([i.type for i in done.new_items]).count("tool_call_item") == 1


def test_a_plain_function_listed_as_a_guardrail_is_located_and_spares_the_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The SDK takes it and fails once a run reaches the agent; check named nothing and
    printed a traceback, and a folder check lost every other file's findings."""
    (tmp_path / "plain_guard_app.py").write_text(textwrap.dedent('''
        from agents import Agent, GuardrailFunctionOutput

        def not_a_guardrail(ctx, agent, text):
            return GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

        entry = Agent(name="entry", instructions="start", input_guardrails=[not_a_guardrail])
    '''))
    (tmp_path / "fine_sdk_app.py").write_text(
        "from agents import Agent\nfine = Agent(name='fine', instructions='ok')\n")
    code, _, err = run_main(["check", "--no-cache", str(tmp_path / "plain_guard_app.py")],
                            capsys)
    assert code == 2
    assert (f"agent 'entry' at {tmp_path}/plain_guard_app.py:7: input_guardrails[0] is a "
            "plain function 'not_a_guardrail', not a guardrail: decorate it with "
            "@input_guardrail") in err, err
    code, out, err = run_main(["check", "--no-cache", str(tmp_path)], capsys)
    assert code == 2 and "fine_sdk_app.py:fine: 0 errors" in out, out
    assert "not_a_guardrail" in err


@pytest.mark.parametrize(("name", "body", "said"), [
    ("instructions", "def hello(ctx):\n    return 'hi'\n\n"
     "a = Agent(name='a', instructions=hello)\n",
     "agent 'a' at {file}:5: instructions: the function must take (ctx, agent), it takes 1"),
    ("is_enabled", "def sometimes(ctx, agent, extra):\n    return True\n\n"
     "@function_tool(is_enabled=sometimes)\n"
     "def note(text: str) -> str:\n    \"\"\"Take a note.\"\"\"\n    return 'ok'\n\n"
     "a = Agent(name='a', instructions='x', tools=[note])\n",
     "tool 'note': is_enabled: the function must take (ctx, agent), it takes 3"),
])
def test_an_sdk_function_the_sdk_cannot_call_is_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, body: str, said: str
) -> None:
    """The SDK calls instructions and is_enabled as fn(ctx, agent) and fails on any other
    shape once the agent's turn comes; check said nothing."""
    app = tmp_path / f"arity_{name}_sdk_app.py"  # a module name of its own here
    app.write_text("from agents import Agent, function_tool\n" + body)
    code, _, err = run_main(["check", "--no-cache", str(app)], capsys)
    assert code == 2
    assert said.format(file=app) in err, err


_GUARD = "    return GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)\n\n"


@pytest.mark.parametrize(("name", "body", "target", "said"), [
    ("input_guardrail", "@input_guardrail\ndef check_input(ctx, data):\n" + _GUARD
     + "a = Agent(name='a', instructions='x', input_guardrails=[check_input])\n", "a",
     "input guardrail 'check_input' at {file}:5 (input_guardrails[0] of agent 'a'): the "
     "function must take (ctx, agent, input), it takes 2 parameter(s)"),
    ("output_guardrail", "@output_guardrail\nasync def bad_sig(ctx, output):\n" + _GUARD
     + "a = Agent(name='a', instructions='x', output_guardrails=[bad_sig])\n", "a",
     "output guardrail 'bad_sig' at {file}:5 (output_guardrails[0] of agent 'a'): the "
     "function must take (ctx, agent, output), it takes 2 parameter(s)"),
    ("agent_hooks", "class BadHooks(AgentHooks):\n    async def on_tool_end(self, ctx, agent, "
     "tool):\n        pass\n\na = Agent(name='a', instructions='x', hooks=BadHooks())\n", "a",
     "hooks BadHooks.on_tool_end at {file}:5 (of agent 'a'): the function must take "
     "(context, agent, tool, result), it takes 3 parameter(s)"),
    ("run_hooks", "class Log(RunHooks):\n    async def on_agent_start(self, context):\n"
     "        pass\n\ndef main():\n    a = Agent(name='a', instructions='x')\n"
     "    Runner.run_sync(a, 'hi', hooks=Log())\n", "main",
     "hooks Log.on_agent_start at {file}:5 (given to Runner.run_sync(...) at {file}:10): the "
     "function must take (context, agent), it takes 1 parameter(s)"),
    ("tool_use_behavior", "def behaviour(results):\n    return None\n\n"
     "a = Agent(name='a', instructions='x', tool_use_behavior=behaviour)\n", "a",
     "tool_use_behavior 'behaviour' at {file}:4 (of agent 'a'): the function must take "
     "(context, results), it takes 1 parameter(s)"),
])
def test_an_sdk_guardrail_hook_or_tool_use_function_the_sdk_cannot_call_is_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, body: str, target: str,
    said: str,
) -> None:
    """The SDK calls a guardrail as fn(ctx, agent, input), a hook as the base class
    declares it and tool_use_behavior as fn(context, results); each of another shape
    passed check, and the run failed with a TypeError."""
    app = tmp_path / f"arity_{name}_sdk_app.py"
    app.write_text("from agents import (Agent, AgentHooks, GuardrailFunctionOutput, RunHooks,"
                   "\n    Runner, input_guardrail, output_guardrail)\n\n" + body)
    code, _, err = run_main(["check", "--no-cache", f"{app}:{target}"], capsys)
    assert code == 2
    assert said.format(file=app) in err, err


def test_sdk_hooks_that_fit_the_base_class_pass(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    app = tmp_path / "fitting_hooks_sdk_app.py"
    app.write_text(textwrap.dedent('''
        from agents import Agent, AgentHooks

        class Fine(AgentHooks):
            async def on_start(self, context, agent):
                pass

            async def on_end(self, context, agent, *rest):
                pass

            def helper(self):  # not a hook: not checked
                pass

        a = Agent(name="a", instructions="x", hooks=Fine())
    '''))
    code, _, err = run_main(["check", "--no-cache", f"{app}:a"], capsys)
    assert code == 0, err


def test_a_tool_that_runs_an_agent_itself_is_sw617_and_its_policies_are_not_proved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK's custom agents-as-tools pattern: billing's charge_card has no approval,
    and require_approval('charge_card') said `holds` for the one triage offers."""
    app = tmp_path / "nested_run_sdk_app.py"
    app.write_text(textwrap.dedent('''
        from agents import Agent, Runner, function_tool

        @function_tool(needs_approval=True)
        def charge_card(amount: int) -> str:
            """Charge the card."""
            return "charged"

        @function_tool(name_override="charge_card")
        def charge_unchecked(amount: int) -> str:
            """Charge the card."""
            return "charged"

        billing = Agent(name="billing", instructions="Bill.", tools=[charge_unchecked])

        @function_tool
        async def ask_billing(question: str) -> str:
            """Ask the billing team."""
            result = await Runner.run(billing, question)
            return str(result.final_output)

        triage = Agent(name="triage", instructions="Route.", tools=[charge_card, ask_billing])
    '''))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [{ rule = "require_approval", tool = "charge_card" }]\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_main(["check", "--no-cache", "nested_run_sdk_app.py:triage"], capsys)
    assert code == 0  # warnings: nothing the checker sees fails
    [tool] = [x for x in out.splitlines() if ": SW617 [" in x]
    assert tool.startswith("nested_run_sdk_app.py:17:1: SW617 [warning] tool 'ask_billing' of "
                           "agent 'triage' runs an agent itself (Runner.run)"), tool
    [policy] = [x for x in out.splitlines() if ": SW806 [" in x]
    assert policy.startswith("pyproject.toml:2:1: SW806 [warning] policy "
                             "require_approval('charge_card') holds for what the checker can "
                             "see, but is undecided: tool 'ask_billing'"), policy
    code, out, _ = run_main(["show", "nested_run_sdk_app.py:triage"], capsys)
    assert code == 0
    [verdict] = [x for x in out.splitlines() if "require_approval('charge_card')" in x]
    assert verdict.startswith("    require_approval('charge_card'): SW806 (warning): holds for "
                              "what the checker can see"), verdict
    assert "ask_billing" in verdict
    # the run started by a function of the module the tool calls: seen through it
    helper = tmp_path / "nested_run_helper_sdk_app.py"
    helper.write_text(textwrap.dedent('''
        from agents import Agent, Runner, function_tool

        billing = Agent(name="billing", instructions="Bill.")

        async def consult(agent, question):
            return await Runner.run(agent, question)

        @function_tool
        async def ask_billing(question: str) -> str:
            """Ask the billing team."""
            return str((await consult(billing, question)).final_output)

        triage = Agent(name="triage", instructions="Route.", tools=[ask_billing])
    '''))
    code, out, _ = run_main(["check", "--no-cache", f"{helper.name}:triage"], capsys)
    [tool] = [x for x in out.splitlines() if ": SW617 [" in x]
    assert "runs an agent itself (Runner.run, through consult())" in tool, tool


def test_agents_built_with_computed_names_are_located_at_their_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """A factory's Agent(name=name), a module-level comprehension's and a clone's
    f-string name were all located at the stepswitch launcher script."""
    app = tmp_path / "computed_names_sdk_app.py"
    app.write_text(textwrap.dedent('''
        from agents import Agent, ModelSettings

        FORCED = ModelSettings(tool_choice="required")

        def build(name):
            return Agent(name=name, instructions="x", model_settings=FORCED)

        team = [
            Agent(name=n, instructions="x", model_settings=FORCED) for n in ("a", "b")
        ]

        def localised(lang):
            base = Agent(name="base", instructions="x")
            return base.clone(name=f"{lang}_agent", model_settings=FORCED)

        def main():
            return Agent(name="lead", instructions="lead",
                         handoffs=[build("solo"), *team, localised("fr")])
    '''))
    code, out, _ = run_main(["check", "--no-cache", f"{app}:main"], capsys)
    assert code == 1
    sites = {line.split("agent '")[1].split("'")[0]: line.split(": SW108")[0]
             for line in out.splitlines() if ": SW108 [" in line}
    assert sites == {"solo": f"{app}:7:1", "a": f"{app}:10:1", "b": f"{app}:10:1",
                     "fr_agent": f"{app}:15:1"}, out


def test_a_handoff_with_on_handoff_is_located_at_the_agent_listing_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """SW603 (input filter) and SW301 (tool_name_override) pointed at the on_handoff
    function's def, where neither can be fixed."""
    app = tmp_path / "on_handoff_site_sdk_app.py"
    app.write_text(textwrap.dedent('''
        from agents import Agent, handoff

        async def on_escalate(ctx):
            pass

        def strip(data):
            return data

        desk = Agent(name="desk", instructions="x")
        front = Agent(
            name="front",
            instructions="x",
            handoffs=[handoff(desk, on_handoff=on_escalate, input_filter=strip,
                              tool_name_override="to desk")],
        )
    '''))
    code, out, _ = run_main(["check", "--no-cache", f"{app}:front"], capsys)
    assert code == 1
    for rule in ("SW603", "SW301"):
        [line] = [x for x in out.splitlines() if f": {rule} [" in x]
        assert line.startswith(f"{app}:11:1: {rule} "), line


def test_a_handoff_with_is_enabled_false_is_no_edge(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A constant-False gate never opens: check said only SW621 ('reaches it only on
    turns its gate is open'), render drew '[if enabled]', and forbid('secret',
    from_agent='front') failed with a path through the edge no run can take."""
    app = tmp_path / "never_enabled_sdk_app.py"
    app.write_text(textwrap.dedent('''
        from agents import Agent, handoff

        secret = Agent(name="secret", instructions="Never offered.")
        desk = Agent(name="desk", instructions="x")
        front = Agent(name="front", instructions="x",
                      handoffs=[desk, handoff(secret, is_enabled=False)])
    '''))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [{ rule = "forbid", tool_or_agent = "secret", '
        'from_agent = "front" }]\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_main(["check", "--no-cache", "never_enabled_sdk_app.py:front"], capsys)
    assert code == 0, out
    assert "SW621" not in out and "SW803" not in out
    [line] = [x for x in out.splitlines() if ": SW107 [" in x]
    assert line == ("never_enabled_sdk_app.py:4:1: SW107 [warning] agent 'secret' is "
                    "unreachable: no handoff or agent tool leads to it from the entry 'front' "
                    "(is_enabled=False: 'transfer_to_secret' of 'front' is never offered)"), line
    code, out, _ = run_main(["render", "never_enabled_sdk_app.py:front", "-f", "mermaid"],
                            capsys)
    assert code == 0
    assert '-.->|"transfer_to_secret [disabled]"|' in out and "[if enabled]" not in out


def test_a_tool_never_enabled_is_not_a_tool_a_policy_can_be_broken_by(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """function_tool(is_enabled=False): the model is never offered it, so a policy
    about it holds; the same tool enabled breaks it."""
    app = tmp_path / "never_enabled_tool_sdk_app.py"
    source = textwrap.dedent('''
        from agents import Agent, function_tool

        @function_tool(is_enabled=GATE)
        def wire_money(amount: int) -> str:
            """Wire money."""
            return "sent"

        front = Agent(name="front", instructions="x", tools=[wire_money])
    ''')
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stepswitch]\npolicies = [{ rule = "require_approval", tool = "wire_money" }]\n')
    monkeypatch.chdir(tmp_path)
    app.write_text(source.replace("GATE", "False"))
    code, out, _ = run_main(["check", "--no-cache", f"{app.name}:front"], capsys)
    assert code == 0 and "SW801" not in out, out
    enabled = tmp_path / "enabled_tool_sdk_app.py"  # another module: sys.modules has the first
    enabled.write_text(source.replace("GATE", "True"))
    code, out, _ = run_main(["check", "--no-cache", f"{enabled.name}:front"], capsys)
    assert code == 1 and "SW801" in out, out


def test_a_folder_annotates_a_finding_on_a_shared_agent_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    """An agent two root apps share was checked in each, and GitHub showed its SW611
    twice on the same line."""
    (tmp_path / "shared_once_sdk_agents.py").write_text(
        "from agents import Agent, WebSearchTool\n"
        "helper = Agent(name='helper', instructions='x', tools=[WebSearchTool()])\n")
    (tmp_path / "front_once_sdk_app.py").write_text(
        "from agents import Agent\nfrom shared_once_sdk_agents import helper\n"
        "front = Agent(name='front', instructions='x', handoffs=[helper])\n")
    code, out, _ = run_main(["check", "--no-cache", str(tmp_path), "--format", "github"],
                            capsys)
    assert code == 0, out
    assert len([x for x in out.splitlines() if "SW611" in x]) == 1, out
    code, out, _ = run_main(["check", "--no-cache", str(tmp_path), "--format", "sarif"],
                            capsys)
    results = json.loads(out)["runs"][0]["results"]
    assert [r["ruleId"] for r in results].count("SW611") == 1


def test_an_sdk_tool_s_docstring_describing_a_missing_parameter_is_sw305(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """As for the DSL's tools: the SDK drops that description from the schema too."""
    app = tmp_path / "doc_typo_sdk_app.py"
    app.write_text(textwrap.dedent('''
        from agents import Agent, function_tool

        @function_tool
        def transfer(account: str, amount: int) -> str:
            """Move money.

            Args:
                acct: the account to pay into
                amount: how much
            """
            return "ok"

        entry = Agent(name="entry", instructions="x", tools=[transfer])
    '''))
    code, out, _ = run_main(["check", "--no-cache", str(app)], capsys)
    assert code == 0
    [line] = [x for x in out.splitlines() if "SW305" in x]
    assert line.startswith(f"{app}:5:1: SW305 [warning]"), line
    assert "describes parameter 'acct'" in line and "did you mean 'account'?" in line


def test_a_tool_guardrail_in_the_wrong_list_is_located_where_it_is_listed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """SW409 pointed at the guardrail's def, far from the list the fix is in."""
    app = tmp_path / "wrong_list_sdk_app.py"
    app.write_text(textwrap.dedent('''
        from agents import (Agent, ToolGuardrailFunctionOutput, function_tool,
                            tool_output_guardrail)

        @tool_output_guardrail
        def redact(data):
            return ToolGuardrailFunctionOutput.allow()

        @function_tool(tool_input_guardrails=[redact])
        def close_account(account: str) -> str:
            """Close an account."""
            return "closed"

        a = Agent(name="a", instructions="x", tools=[close_account])
    '''))
    code, out, _ = run_main(["check", "--no-cache", str(app)], capsys)
    assert code == 1
    [line] = [x for x in out.splitlines() if ": SW409 [" in x]
    assert line.startswith(f"{app}:10:1: SW409 [error] tool input guardrail 'redact' of "
                           "tool 'close_account' is a tool output guardrail"), line


def test_a_broken_sdk_app_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["check", "tests/interop/sdk_apps/broken.py:fragile"], capsys)
    assert code == 2
    assert err.strip() == (
        "stepswitch: error: tests/interop/sdk_apps/broken.py:fragile: agent 'Fragile' at "
        "tests/interop/sdk_apps/broken.py:29: tool 'exploding' cannot be read: RuntimeError: "
        "inspection failed")


def test_run_an_sdk_agent_with_a_context_factory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_main(["run", f"{APP}:triage_agent", "--input", "refund 7",
                          "--model", _script(tmp_path, REFUND), "--approve", "all",
                          "--context", "tests.interop.sdk_apps.contexts:ada"], capsys)
    assert code == 0, err
    assert out == "refunded 7 for ada\n"


def test_run_without_a_context_that_needs_arguments_names_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_main(["run", f"{APP}:triage_agent", "--input", "hi",
                        "--model", _script(tmp_path, REFUND)], capsys)
    assert code == 2
    assert "context_type=Account, which does not construct with no arguments" in err
    assert "pass --context module:factory" in err


def test_a_context_factory_that_raises_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_main(["run", f"{APP}:triage_agent", "--input", "hi",
                        "--model", _script(tmp_path, REFUND),
                        "--context", "tests/interop/sdk_apps/contexts.py:broken"], capsys)
    assert code == 2
    assert err.strip().endswith("broken() raised RuntimeError: no database")


def test_a_context_type_that_builds_itself_is_used(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "ctxflow.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass
        import stepswitch as ss

        @dataclass
        class Prefs:
            greeting: str = "howdy"

        @ss.function_tool
        def greet(ctx: ss.RunContext[Prefs]) -> str:
            """Greet."""
            return ctx.context.greeting

        flow = ss.Workflow("flow", entry=ss.Agent("a", tools=[greet],
                           tool_use_behavior="stop_on_first_tool"), context_type=Prefs)
    '''))
    steps = [{"output": [{"type": "function_call", "name": "greet", "arguments": {}}]}]
    code, out, err = run_main(["run", f"{tmp_path / 'ctxflow.py'}:flow", "--input", "hi",
                          "--model", _script(tmp_path, steps)], capsys)
    assert code == 0, err
    assert out == "howdy\n"


RUNNER_DRIVER = """
import importlib.util, sys
from stepswitch.testing import ScriptedModel, function_call
from tests.interop.sdk_apps.support import Account
spec = importlib.util.spec_from_file_location("sdk_runner", sys.argv[1])
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)
model = ScriptedModel([
    [function_call("transfer_to_refund_agent", {"reason": "late"})],
    [function_call("process_refund", {"order_id": 7})],
])
paused = runner.run_sync("refund 7", model=model, context=Account("bo"))
state = paused.to_state()
state.approve(paused.interruptions[0])
done = runner.run_sync(state, model=model, context=Account("bo"))
print(done.final_output, "|", sorted(m for m in sys.modules if m.startswith("stepswitch.")
                                     and m.split(".")[1] in ("analysis", "render")))
"""


def test_compile_an_sdk_agent_gives_a_runner_that_runs_in_a_fresh_process(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_file = tmp_path / "runner.py"
    code, _, err = run_main(["compile", f"{APP}:triage_agent", "-o", str(out_file)], capsys)
    assert code == 0, err
    source = out_file.read_text()
    assert '"stepswitch.interop.sdk_objects:tests.interop.sdk_apps.support:polite"' in source
    code, _, err = run_main(["compile", f"{APP}:triage_agent", "-o", str(out_file), "--check"],
                       capsys)
    assert code == 0, err
    import subprocess

    done = subprocess.run([sys.executable, "-c", RUNNER_DRIVER, str(out_file)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    output, loaded = done.stdout.strip().split(" | ")
    assert output == "refunded 7 for bo"
    assert loaded == "[]"  # the runner needs no analyzer or renderer (the DSL builds tools)


def test_show_counts_a_hosted_tool_and_a_server_apart_from_function_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_main(["show", "tests/interop/sdk_apps/hosted.py:researcher"], capsys)
    assert code == 0
    assert ("1 function tool(s) (0 need approval), 1 hosted tool(s) OpenAI runs, 1 server or "
            "computer tool(s) stepswitch does not run, max_turns=10") in out
    assert "hosted web_search (web_search, run by OpenAI)" in out
