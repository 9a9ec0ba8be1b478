"""The composite GitHub action (action.yml): its steps' commands, run as written on a
local git repository with two commits (the base has a handoff the head removes, and a
case recorded on the base)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests._paths import ROOT


def steps() -> dict[str, dict[str, object]]:
    """The action's steps that have an id: their ``run`` script and ``env``, read from
    the file as written (two-space YAML, ``run: |`` blocks)."""
    found: dict[str, dict[str, object]] = {}
    current: dict[str, object] | None = None
    mode = ""
    for line in (ROOT / "action.yml").read_text().splitlines():
        if line.startswith("    - "):
            current = {"run": "", "env": {}}
            mode = ""
            line = "      " + line[6:]
        if current is None:
            continue
        m = re.match(r"^      (\w[\w-]*):\s*(.*)$", line)
        if m:
            key, value = m.groups()
            mode = key
            if key == "id":
                found[value] = current
            elif key == "if":
                current["if"] = value
            continue
        if mode == "run" and (line.startswith("        ") or not line.strip()):
            current["run"] = str(current["run"]) + line[8:] + "\n"
        elif mode == "env" and line.startswith("        "):
            k, _, v = line.strip().partition(": ")
            env = current["env"]
            assert isinstance(env, dict)
            env[k] = v
    return found


def defaults() -> dict[str, str]:
    text = (ROOT / "action.yml").read_text()
    block = text.split("inputs:\n", 1)[1].split("\nruns:", 1)[0]
    out: dict[str, str] = {}
    name = ""
    for line in block.splitlines():
        if re.match(r"^  [\w-]+:$", line):
            name = line.strip()[:-1]
        elif line.strip().startswith("default:"):
            out[name] = line.split("default:", 1)[1].strip().strip('"')
    return out


def _expand(text: str, values: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        return values[m.group(1).strip()]
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", one, text)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_action_steps_run_on_a_repository_with_two_commits(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "graphs").mkdir(parents=True)
    (repo / "tests").mkdir()
    source = (ROOT / "graphs" / "support.py").read_text()
    (repo / "graphs" / "support.py").write_text(source)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "ci@example.com")
    _git(repo, "config", "user.name", "ci")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "stepswitch"
    tool.write_text(f"#!/bin/sh\nexec {sys.executable} -m stepswitch \"$@\"\n")
    tool.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "PYTHONPATH": f"{ROOT / 'src'}:{repo}", "HOME": str(tmp_path)}
    # a case recorded on the base commit
    recorded = subprocess.run(
        ["stepswitch", "run", "graphs/support.py:support", "--input", "Order 42 is damaged",
         "--model", f"scripted:{ROOT / 'examples' / 'support_script.json'}",
         "--approve", "all", "--record", "tests/refund.trail.json"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert recorded.returncode == 0, recorded.stderr
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "graphs" / "support.py").write_text(
        source.replace("    handoffs=[refund],\n", "    handoffs=[],\n"))
    _git(repo, "commit", "-qam", "head: triage no longer hands refunds over")
    values = {f"inputs.{k}": v for k, v in defaults().items()}
    values.update({"github.event.pull_request.base.sha": base, "inputs.targets": "graphs/"})
    codes = {}
    found = steps()
    assert {"install", "check", "diff", "comment", "test"} <= set(found)
    for name in ("check", "diff", "test"):
        step = found[name]
        script = _expand(str(step["run"]), values)
        step_env = dict(env)
        raw_env = step["env"]
        assert isinstance(raw_env, dict)
        step_env.update({k: _expand(v, values) for k, v in raw_env.items()})
        done = subprocess.run(["bash", "-e", "-c", script], cwd=repo, env=step_env,
                              capture_output=True, text=True, timeout=180)
        assert "Traceback" not in done.stderr, done.stderr
        codes[name] = (done.returncode, done.stdout)
    assert codes["check"][0] == 0, codes["check"]
    # the head breaks saved states: the diff step fails on --fail-on state,safety
    assert codes["diff"][0] == 1 and "stepswitch diff%3A state" in codes["diff"][1]
    sarif = json.loads((repo / "stepswitch.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    comment = (repo / "stepswitch-diff.md").read_text()
    assert comment.startswith("### Workflow changes") and "transfer_to_refund" in comment
    # the case recorded on the base diverges on the head: the handoff is gone
    assert codes["test"][0] == 1
    assert "RP103" in codes["test"][1] and "::error file=tests/refund.trail.json" in \
        codes["test"][1]
    junit = (repo / "stepswitch-junit.xml").read_text()
    assert 'tests="1" failures="1"' in junit
