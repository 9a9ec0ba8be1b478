"""The studio page in a real headless chromium: the support workflow drawn, an agent's
tools and schemas, a recorded run stepped with the keyboard, a diff, a refused trail, a
reload after an edit, and no request that leaves 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._paths import ROOT
from tests.studio.conftest import POLICY_FAILS, Served, serve

SUPPORT = str(ROOT / "graphs" / "support.py") + ":support"


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("run") / "state.json"
    subprocess.run([sys.executable, str(ROOT / "examples" / "support_run.py"), "--state",
                    str(path)], check=True, capture_output=True, cwd=ROOT)
    return str(path)


@pytest.fixture(scope="module")
def support(state: str) -> Iterator[Served]:
    served = serve([SUPPORT, "--trail", state])
    yield served
    served.close()


def _open(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    page.wait_for_selector("#canvas svg g.node")
    return page, requests


def test_support_page_loads_and_no_request_leaves_the_machine(browser: Any,
                                                               support: Served) -> None:
    failed: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400
            else None)
    page.goto(support.url)
    page.wait_for_selector("#canvas svg g.node")
    page.wait_for_timeout(300)
    assert failed == []  # nothing the page asks for is missing (a favicon was a 404)
    page.close()
    page, requests = _open(browser, support.url)
    titles = page.eval_on_selector_all("#canvas g.node text", "els => els.map(e => e.textContent)")
    assert {"triage", "refund", "researcher"} <= set(titles)
    page.wait_for_timeout(1200)  # one poll of /api/version at least
    assert requests and all(u.startswith(support.url) for u in requests), requests
    assert any(u.endswith("/api/version") for u in requests)
    page.close()


def test_click_an_agent_shows_its_tools_and_schema(browser: Any, support: Served) -> None:
    page, _ = _open(browser, support.url)
    page.click("#canvas g.node:has(text:text-is('refund'))")
    panel = page.locator("#tab-agent")
    assert panel.locator("h2").inner_text() == "refund"
    tool = panel.locator(".tool[data-tool='process_refund']")
    assert "needs approval: always" in tool.inner_text()
    schema = json.loads(tool.locator("pre").inner_text())
    assert schema["properties"]["order_id"]["type"] == "integer"
    assert "order_id" in schema["required"]
    assert "transfer_to_triage" in panel.inner_text()
    assert "at most 2 uses" in panel.inner_text()
    assert "process_refund (always)" in panel.inner_text()  # a pause point
    assert "SW501" in panel.inner_text()  # its finding
    assert page.locator("#canvas g.node.lit").count() == 1
    page.close()


def test_an_agent_is_opened_from_the_keyboard(browser: Any, support: Served) -> None:
    page, _ = _open(browser, support.url)
    page.focus("#canvas g.node:has(text:text-is('refund'))")
    page.keyboard.press("Enter")
    assert page.locator("#tab-agent h2").inner_text() == "refund"
    assert page.locator("#canvas g.node[tabindex='0']").count() >= 3  # every agent
    page.close()


def test_a_refresh_comes_back_to_the_agent_and_tab_it_showed(browser: Any,
                                                              support: Served) -> None:
    page, _ = _open(browser, support.url)
    page.click("#canvas g.node:has(text:text-is('refund'))")
    page.click(".tabs button[data-tab='findings']")
    page.reload()
    page.wait_for_selector("#canvas svg")
    assert page.locator(".tabs button.on").get_attribute("data-tab") == "findings"
    assert page.locator("#tab-agent h2").inner_text() == "refund"
    page.close()


def test_a_finding_lights_its_node(browser: Any, support: Served) -> None:
    page, _ = _open(browser, support.url)
    page.click(".tabs button[data-tab='findings']")
    page.locator("#tab-findings .finding", has_text="SW501").first.click()
    lit = page.locator("#canvas g.lit text").first.text_content()
    assert lit == "refund"
    page.close()


def test_step_through_a_recorded_run_with_the_keyboard(browser: Any, support: Served) -> None:
    page, _ = _open(browser, support.url)
    page.locator("#canvas").focus()
    page.keyboard.press("ArrowRight")
    run = page.locator("#tab-run")
    assert "turn 2 of 4" in run.inner_text()
    assert run.locator(".step").inner_text() == "RunAgain"
    assert '"order_id": 42' in run.locator("pre.args").first.inner_text()
    assert "shipped" in run.locator("pre.output").first.inner_text()
    assert page.locator("#canvas g.node.current text").first.text_content() == "triage"
    page.keyboard.press("ArrowRight")
    assert run.locator(".step").inner_text() == "Handoff → refund"
    page.keyboard.press("ArrowRight")
    assert run.locator(".step").inner_text() == "Interruption"
    assert "waiting for a decision" in run.inner_text()
    assert page.locator("#canvas g.node.current text").first.text_content() == "refund"
    assert page.locator("#canvas g.node.visited").count() == 2
    page.keyboard.press("ArrowLeft")
    assert run.locator(".step").inner_text() == "Handoff → refund"
    page.close()


def test_a_trail_of_another_workflow_is_refused_with_the_reason(
        browser: Any, tmp_path: Path) -> None:
    trail = tmp_path / "other.json"
    trail.write_text(json.dumps([
        {"type": "user_input_item", "role": "user", "content": "hi"},
        {"type": "message_output_item", "agent": "billing", "content": "hello"},
    ]))
    served = serve([SUPPORT, "--trail", str(trail)])
    try:
        page, _ = _open(browser, served.url)
        page.click(".tabs button[data-tab='run']")
        text = page.locator("#tab-run .refused").inner_text()
        assert "agent 'billing'" in text and "'support' does not have" in text
        page.close()
    finally:
        served.close()


def test_a_diff_of_two_targets_colours_the_diagram(browser: Any, tmp_path: Path) -> None:
    head = tmp_path / "support_head.py"
    source = (ROOT / "graphs" / "support.py").read_text()
    head.write_text(source.replace("ss.handoff(\"triage\", max_uses=2)",
                                   "ss.handoff(\"triage\", max_uses=3)"))
    served = serve([SUPPORT, f"{head}:support"])
    try:
        page, _ = _open(browser, served.url)
        page.click(".tabs button[data-tab='diff']")
        changes = page.locator("#tab-diff .change")
        assert changes.count() >= 1
        assert "max_uses" in page.locator("#tab-diff").inner_text()
        coloured = page.locator("#canvas g.node[class*='diff-'] text").first.text_content()
        assert coloured == "refund"
        page.close()
    finally:
        served.close()


def test_the_page_reloads_when_the_workflow_file_changes(browser: Any, tmp_path: Path) -> None:
    file = tmp_path / "edited.py"
    shutil.copy(ROOT / "graphs" / "support.py", file)
    served = serve([f"{file}:support"], poll=0.2)
    try:
        page, _ = _open(browser, served.url)
        page.locator("#canvas g.node:has(text:text-is('triage'))").click()
        page.click(".tabs button[data-tab='findings']")
        file.write_text(file.read_text().replace('name="researcher"', 'name="scholar"')
                        .replace("researcher,", "scholar,").replace("(researcher", "(scholar"))
        page.wait_for_selector("#canvas g.node:has(text:text-is('scholar'))", timeout=10000)
        # the reader stays where they were: the findings tab, the selected agent kept
        assert page.locator(".tabs button.on").get_attribute("data-tab") == "findings"
        assert page.locator("#tab-agent h2").inner_text() == "triage"
        page.wait_for_timeout(600)  # past the next polls: the note is not wiped at once
        assert page.locator("#status").inner_text().startswith("reloaded ")
        file.write_text(file.read_text() + "\nthis is not python\n")
        page.wait_for_selector("#status.error", timeout=10000)
        assert "reload failed" in page.locator("#status").inner_text()
        assert page.locator("#canvas g.node:has(text:text-is('scholar'))").count() == 1
        page.close()
    finally:
        served.close()


def test_a_workflow_with_errors_still_serves(browser: Any) -> None:
    served = serve([str(ROOT / "examples" / "broken_workflow.py")])
    try:
        page, _ = _open(browser, served.url)
        page.click(".tabs button[data-tab='findings']")
        assert page.locator("#tab-findings .finding.error").count() >= 1
        page.locator("#tab-findings .finding", has_text="SW201").first.click()
        lit = page.locator("#canvas g.edge.lit")
        assert lit.count() == 1
        assert lit.locator("title").text_content() == "a0->a1"  # the handoff it names
        page.close()
    finally:
        served.close()


def test_a_failing_policy_lists_its_path_and_lights_it(browser: Any, tmp_path: Path) -> None:
    file = tmp_path / "policy.py"
    file.write_text(POLICY_FAILS)
    served = serve([f"{file}:wf"])
    try:
        page, _ = _open(browser, served.url)
        page.click(".tabs button[data-tab='findings']")
        found = page.locator("#tab-findings .finding", has_text="SW801")
        assert found.locator("ol.trace li").all_inner_texts()[1].startswith(
            "hands off to 'back' (transfer_to_back)")
        found.click()
        lit = page.locator("#canvas g.node.lit")
        assert lit.locator("title").all_text_contents() == ["a0", "a1"]  # not 'side' (a2)
        names = page.eval_on_selector_all("#canvas g.node.lit",
                                          "gs => gs.map(g => g.querySelector('text').textContent)")
        assert names == ["front", "back"]
        assert page.locator("#canvas g.edge.lit title").all_text_contents() == ["a0->a1"]
        page.close()
    finally:
        served.close()


def test_another_host_name_is_refused(support: Served) -> None:
    import urllib.error
    import urllib.request

    port = support.server.server_address[1]
    request = urllib.request.Request(f"{support.url}api/page",
                                     headers={"Host": f"evil.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 403
    with pytest.raises(urllib.error.HTTPError) as caught:  # only the shipped assets
        urllib.request.urlopen(f"{support.url}static/../server.py", timeout=10)
    assert caught.value.code == 404


def test_cli_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "stepswitch", "studio", SUPPORT,
                               "--port", str(port)], capture_output=True, text=True,
                              timeout=60, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert f"--port {port}: cannot listen on 127.0.0.1" in done.stderr


def test_cli_serves_and_prints_its_address() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "stepswitch", "studio", SUPPORT],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("stepswitch studio: serving http://127.0.0.1:")
        url = line.split()[3]
        import urllib.request

        deadline = time.monotonic() + 10
        with urllib.request.urlopen(url + "api/page", timeout=deadline) as r:
            doc = json.load(r)
        assert doc["workflows"][0]["name"] == "support"
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_narrow_window_stacks_the_panel_under_the_diagram(browser: Any,
                                                            support: Served) -> None:
    page = browser.new_page(viewport={"width": 600, "height": 900})
    page.goto(support.url)
    page.wait_for_selector("#canvas svg g.node")
    canvas = page.locator("#canvas").bounding_box()
    side = page.locator("#side").bounding_box()
    assert side["y"] >= canvas["y"] + canvas["height"] - 1
    assert side["width"] > 560
    page.click("#canvas g.node:has(text:text-is('triage'))")
    assert page.locator("#tab-agent h2").inner_text() == "triage"
    page.close()


def test_cli_a_target_that_does_not_import_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\nthis is not python\n")
    done = subprocess.run([sys.executable, "-m", "stepswitch", "studio", str(bad)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "importing it raised an exception" in done.stderr
    assert "NameError: name 'this' is not defined" in done.stderr
