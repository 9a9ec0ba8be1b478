"""Policies: the team's own rules about every run, proved by ``stepswitch check``.

``Workflow(policies=[ss.require_approval("process_refund"), ss.max_calls("send_email", 1)])``
or, in ``pyproject.toml``, ``[tool.stepswitch] policies = [{ rule = "max_calls", tool =
"send_email", n = 1 }]``. Each constructor returns a frozen :class:`Policy`, a plain value
a runner's user module can declare without loading the compiler (its spec form,
:class:`~stepswitch.graph.spec.PolicySpec`, is made when the workflow is built); the
analyzer (SW8xx) proves it over every path a run can take, or prints the shortest run
that breaks it. Tools, agents and steps may be given as objects or by name; where a rule
takes a tool, an MCP selector names several by their server and locked annotations:
``"mcp:*"`` (every MCP tool a run can call), ``"mcp:files"`` (server ``files``'s),
``"mcp:*:destructive"`` (those the lock says may destroy), ``":writes"``, ``":read_only"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from stepswitch._dataclass import dataclass
from stepswitch._policy_text import describe
from stepswitch._site import Site, caller_site, display_path
from stepswitch.errors import UserError

if TYPE_CHECKING:
    from stepswitch.graph.spec import PolicySpec

__all__ = [
    "MCP_KINDS",
    "Policy",
    "forbid",
    "max_calls",
    "mcp_selector",
    "only_after",
    "policies_from_pyproject",
    "policy_from_table",
    "prices_from_pyproject",
    "require_approval",
    "require_guardrail",
    "unmatched_scopes",
    "unread_pyprojects",
]

Rule = Literal["require_approval", "require_guardrail", "forbid", "max_calls", "only_after"]


@dataclass(frozen=True, slots=True)
class Policy:
    """One of the team's rules, as declared: what ``ss.require_approval(...)`` and the
    other constructors return, and what ``Workflow(policies=[...])`` takes.

    ``target`` is the tool (or, for ``forbid``, the tool or agent) the rule is about;
    ``guardrail`` the input guardrail ``require_guardrail`` asks for; ``from_agent``
    where ``forbid`` starts to apply; ``n`` the most calls ``max_calls`` allows;
    ``first`` what ``only_after`` wants run before; ``file`` and ``line`` where it was
    declared."""

    rule: Rule
    target: str
    file: str
    line: int
    guardrail: str | None = None
    from_agent: str | None = None
    n: int | None = None
    first: str | None = None
    workflows: tuple[str, ...] = ()
    """A ``pyproject.toml`` rule's ``workflows = [...]``: the workflows (by name) it
    applies to; empty, every workflow the command reads."""

    def applies_to(self, workflow: str) -> bool:
        """Whether this rule is one of workflow ``workflow``'s."""
        return not self.workflows or workflow in self.workflows

    def describe(self) -> str:
        """The rule as written: ``max_calls('send_email', 1)``."""
        return describe(self)

    def to_spec(self) -> PolicySpec:
        """The spec form the analyzer reads."""
        from stepswitch.graph.spec import Location, PolicySpec

        return PolicySpec(rule=self.rule, target=self.target, guardrail=self.guardrail,
                          from_agent=self.from_agent, n=self.n, first=self.first,
                          location=Location(file=self.file, line=self.line))


def as_spec(policy: Policy | PolicySpec) -> PolicySpec:
    """The spec form of a declared policy (a spec is returned as it is)."""
    return policy.to_spec() if isinstance(policy, Policy) else policy


_RULES = ("require_approval", "require_guardrail", "forbid", "max_calls", "only_after")


MCP_KINDS = ("destructive", "writes", "read_only")
"""What an MCP selector's third part may say, read from each tool's locked annotations
(MCP's defaults: a tool may destroy unless ``destructiveHint`` is false or
``readOnlyHint`` true; it writes unless ``readOnlyHint`` is true)."""


def mcp_selector(text: str) -> tuple[str, str | None] | None:
    """``mcp:SERVER`` or ``mcp:SERVER:KIND`` (``*`` for every server) as (server, kind);
    None for a plain tool name. A malformed selector raises ``ValueError`` saying why."""
    if not text.startswith("mcp:"):
        return None
    parts = text.split(":")
    if len(parts) not in (2, 3) or not parts[1]:
        raise ValueError(f"{text!r}: an MCP selector is mcp:SERVER or mcp:SERVER:KIND "
                         f"(SERVER a server's name or *, KIND one of {', '.join(MCP_KINDS)})")
    if len(parts) == 3 and parts[2] not in MCP_KINDS:
        raise ValueError(f"{text!r}: the kind {parts[2]!r} is none of {', '.join(MCP_KINDS)}")
    return parts[1], parts[2] if len(parts) == 3 else None


def _tool(value: object, what: str, rule: str, site: Site | str) -> str:
    """A tool's name, or an MCP selector (``mcp:*:destructive``), checked."""
    name = _name(value, what, rule, site)
    try:
        mcp_selector(name)
    except ValueError as exc:
        raise UserError(f"{rule}(...) at {site}: {what}: {exc}") from None
    return name


def _name(value: object, what: str, rule: str, site: Site | str) -> str:
    """A tool's, agent's, step's or guardrail's name: the string itself, or the
    object's ``name`` (``FunctionTool``, ``Agent``, ``@step``, a guardrail)."""
    if isinstance(value, str):
        if value.strip():
            return value
    else:
        name = getattr(value, "name", None)
        if isinstance(name, str) and name.strip():
            return name
        fn = getattr(value, "__name__", None)
        if callable(value) and isinstance(fn, str):
            return fn
    raise UserError(f"{rule}(...) at {site}: {what}: expected a name or an object with a "
                    f"name, got {type(value).__name__} {value!r}")


def require_approval(tool: object) -> Policy:
    """Every call of ``tool``, by any agent at any depth, waits for a human's yes."""
    site = caller_site()
    return Policy("require_approval", _tool(tool, "tool", "require_approval", site),
                  display_path(site.file), site.line)


def require_guardrail(tool: object, guardrail: object) -> Policy:
    """Every call of ``tool`` passes the tool input guardrail ``guardrail`` first."""
    site = caller_site()
    return Policy("require_guardrail", _tool(tool, "tool", "require_guardrail", site),
                  display_path(site.file), site.line,
                  guardrail=_name(guardrail, "guardrail", "require_guardrail", site))


def forbid(tool_or_agent: object, from_agent: object = None) -> Policy:
    """No run reaches ``tool_or_agent`` (from ``from_agent``'s turns on, when given)."""
    site = caller_site()
    return Policy(
        "forbid", _tool(tool_or_agent, "tool_or_agent", "forbid", site),
        display_path(site.file), site.line,
        from_agent=None if from_agent is None else _name(from_agent, "from_agent", "forbid",
                                                         site),
    )


def max_calls(tool: object, n: int) -> Policy:
    """No run runs ``tool`` more than ``n`` times (nested runs included)."""
    site = caller_site()
    if type(n) is not int or n < 0:
        raise UserError(f"max_calls(...) at {site}: n: expected an int >= 0, got {n!r}")
    return Policy("max_calls", _tool(tool, "tool", "max_calls", site),
                  display_path(site.file), site.line, n=n)


def only_after(tool: object, first: object) -> Policy:
    """No call of ``tool`` before ``first`` (a tool, an agent or a step) has run."""
    site = caller_site()
    return Policy("only_after", _tool(tool, "tool", "only_after", site),
                  display_path(site.file), site.line,
                  first=_name(first, "first", "only_after", site))


_ARGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # rule -> (required keys, optional keys), named as the constructor's arguments
    "require_approval": (("tool",), ()),
    "require_guardrail": (("tool", "guardrail"), ()),
    "forbid": (("tool_or_agent",), ("from_agent",)),
    "max_calls": (("tool", "n"), ()),
    "only_after": (("tool", "first"), ()),
}


def policy_from_table(table: object, where: str, file: str, line: int) -> Policy:
    """One ``[tool.stepswitch] policies`` entry (``{ rule = "max_calls", tool = "x", n =
    1 }``) as a policy declared at ``file:line``; a wrong entry is a ``UserError``
    starting with ``where``."""
    if not isinstance(table, Mapping):
        raise UserError(f"{where}: expected a table like {{ rule = \"require_approval\", "
                        f"tool = \"...\" }}, got {type(table).__name__}")
    rule = table.get("rule")
    if rule not in _ARGS:
        raise UserError(f"{where}: rule: expected one of {', '.join(_RULES)}, got {rule!r}")
    required, optional = _ARGS[rule]
    keys = set(table) - {"rule", "workflows"}
    scope = table.get("workflows", [])
    if not (isinstance(scope, list) and all(isinstance(w, str) and w.strip() for w in scope)):
        raise UserError(f"{where}: {rule}: workflows: expected a list of workflow names, "
                        f"got {scope!r}")
    missing = [k for k in required if k not in keys]
    extra = sorted(keys - set(required) - set(optional))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if extra:
            parts.append(f"unknown {', '.join(extra)}")
        raise UserError(f"{where}: {rule}: {'; '.join(parts)} (it takes "
                        f"{', '.join(required + optional)}, and workflows = [...] to apply "
                        "to those only)")
    for key in keys:
        value = table[key]
        ok = (type(value) is int and value >= 0) if key == "n" else (
            isinstance(value, str) and bool(value.strip()))
        if not ok:
            want = "an int >= 0" if key == "n" else "a name"
            raise UserError(f"{where}: {rule}: {key}: expected {want}, got {value!r}")
        if key in ("tool", "tool_or_agent"):
            try:
                mcp_selector(value)
            except ValueError as exc:
                raise UserError(f"{where}: {rule}: {key}: {exc}") from None
    target = table.get("tool", table.get("tool_or_agent"))
    return Policy(rule, target, file, line, guardrail=table.get("guardrail"),
                  from_agent=table.get("from_agent"), n=table.get("n"),
                  first=table.get("first"), workflows=tuple(scope))


def policies_from_pyproject(
    start: Path | None = None, *, workflow: str | None = None
) -> tuple[Policy, ...]:
    """The policies of the nearest ``pyproject.toml`` (from ``start``, default the working
    directory, upwards) under ``[tool.stepswitch] policies``; () when there are none.
    With ``workflow``, only those that apply to it (an entry's ``workflows = [...]``)."""
    found = _pyproject(start)
    if found is None:
        return ()
    path, text, data = found
    shown = display_path(str(path))
    section = data.get("tool", {}).get("stepswitch", {})
    entries = section.get("policies") if isinstance(section, dict) else None
    if entries is None:
        return ()
    line = 1 + next((i for i, ln in enumerate(text.splitlines())
                     if ln.strip().startswith("policies")), 0)
    location = f"{shown}:{line}"
    if not isinstance(entries, list):
        raise UserError(f"{location}: [tool.stepswitch] policies: expected a list of tables, "
                        f"got {type(entries).__name__}")
    lines = _entry_lines(text, line, len(entries))
    read = tuple(
        policy_from_table(entry, f"{shown}:{at}: [tool.stepswitch] policies[{i}]", shown, at)
        for i, (entry, at) in enumerate(zip(entries, lines, strict=True)))
    first: dict[tuple[object, ...], int] = {}
    for i, p in enumerate(read):  # a rule twice is proved and reported twice: a slip
        same = (p.rule, p.target, p.guardrail, p.from_agent, p.n, p.first, p.workflows)
        earlier = first.setdefault(same, i)
        if earlier != i:
            raise UserError(f"{shown}:{p.line}: [tool.stepswitch] policies[{i}] repeats "
                            f"policies[{earlier}] (line {read[earlier].line}): drop one")
    return read if workflow is None else tuple(p for p in read if p.applies_to(workflow))


def _entry_lines(text: str, start: int, count: int) -> list[int]:
    """The line each of the ``count`` policies starts on: each ``[[tool.stepswitch.
    policies]]`` header, or each inline table ``{`` of the ``policies = [...]`` array
    that starts on line ``start``; ``start`` for every entry when they cannot be told."""
    rows = text.splitlines()
    headers = [i + 1 for i, row in enumerate(rows)
               if row.strip().replace(" ", "") == "[[tool.stepswitch.policies]]"]
    if len(headers) == count:
        return headers
    found: list[int] = []
    depth, quote = 0, ""
    for number, row in enumerate(rows[start - 1:], start):
        i = 0
        while i < len(row):
            ch = row[i]
            if quote:  # inside a string: only its closing quote (a \ escapes in "...")
                if ch == "\\" and quote == '"':
                    i += 1
                elif ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                break  # a comment: the rest of the line
            elif ch in "[{":
                if ch == "{" and depth == 1:
                    found.append(number)
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth == 0:
                    return found if len(found) == count else [start] * count
            i += 1
    return found if len(found) == count else [start] * count


_SETTINGS = ("policies", "prices")  # what [tool.stepswitch] may hold


def _pyproject(start: Path | None) -> tuple[Path, str, dict[str, Any]] | None:
    """The nearest pyproject.toml from ``start`` up: its path, text and TOML; a
    ``[tool.stepswitch]`` that is not a table, or holds a key stepswitch does not read
    (a misspelt ``polices`` would otherwise prove nothing, silently), is a located
    ``UserError``."""
    import tomllib

    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        path = folder / "pyproject.toml"
        if path.is_file():
            text = path.read_text("utf-8")
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise UserError(f"{display_path(str(path))}: {exc}") from None
            _check_section(display_path(str(path)), text, data)
            return path, text, data
    return None


def _check_section(shown: str, text: str, data: dict[str, Any]) -> None:
    tool = data.get("tool", {})
    section = tool.get("stepswitch", {}) if isinstance(tool, dict) else {}
    if not isinstance(section, dict):
        raise UserError(f"{shown}: [tool.stepswitch]: expected a table (of "
                        f"{' and '.join(_SETTINGS)}), got {type(section).__name__}")
    for key in section:
        if key in _SETTINGS:
            continue
        import difflib

        close = difflib.get_close_matches(key, _SETTINGS, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UserError(f"{shown}{_setting_line(text, key)}: [tool.stepswitch]: unknown "
                        f"setting {key!r} (it takes {' and '.join(_SETTINGS)}){hint}")


def _setting_line(text: str, key: str) -> str:
    """``:LINE`` of the ``[tool.stepswitch.KEY]`` header or of the line setting ``key``
    in the ``[tool.stepswitch]`` table; empty when it cannot be found."""
    inside = False
    for number, row in enumerate(text.splitlines(), 1):
        bare = row.strip().replace(" ", "")
        if bare.startswith("["):
            if bare.strip("[]") in (f"tool.stepswitch.{key}", f'tool.stepswitch."{key}"'):
                return f":{number}"
            inside = bare == "[tool.stepswitch]"
        elif inside and any(bare.startswith(f"{q}{key}{q}=") for q in ('"', "'", "")):
            return f":{number}"
    return ""


def _key_line(text: str, key: str) -> str:
    """``:LINE`` of the first line that sets ``key`` (bare or quoted) after the
    ``[tool.stepswitch.prices]`` header, or in an inline ``prices = {...}`` of
    ``[tool.stepswitch]`` (that line itself when the key is not on a line of its own);
    empty when it cannot be found."""
    rows = text.splitlines()
    seen, inline, section = False, 0, False
    for number, row in enumerate(rows, 1):
        bare = row.strip()
        squeezed = bare.replace(" ", "")
        if squeezed.startswith("["):
            seen = squeezed == "[tool.stepswitch.prices]"
            section = squeezed == "[tool.stepswitch]"
            continue
        if section and not inline and squeezed.startswith("prices="):
            inline = number
        quoted = any(q + key + q in row for q in ('"', "'"))
        if (seen and (quoted or bare.startswith(key))) or (inline and quoted):
            return f":{number}"
    return f":{inline}" if inline else ""


def prices_from_pyproject(start: Path | None = None) -> dict[str, tuple[float, float]]:
    """``[tool.stepswitch.prices]`` of the nearest ``pyproject.toml``: model -> (input,
    output) USD per 1M tokens, e.g. ``"my-model" = { input = 0.5, output = 1.5 }``."""
    found = _pyproject(start)
    if found is None:
        return {}
    path, text, data = found
    section = data.get("tool", {}).get("stepswitch", {})
    table = section.get("prices") if isinstance(section, dict) else None
    if table is None:
        return {}
    shown = display_path(str(path))
    out: dict[str, tuple[float, float]] = {}
    if not isinstance(table, dict):
        raise UserError(f"{shown}: [tool.stepswitch.prices]: expected a table of models")
    for model, price in table.items():
        ok = isinstance(price, dict) and set(price) == {"input", "output"} and all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            for v in price.values())
        if not ok:
            raise UserError(f"{shown}{_key_line(text, model)}: [tool.stepswitch.prices] "
                            f"{model!r}: expected {{ input = USD, output = USD }} per 1M "
                            f"tokens, got {price!r}")
        out[model] = (float(price["input"]), float(price["output"]))
    return out


def unmatched_scopes(policies: Sequence[Policy], names: set[str]) -> list[str]:
    """A pyproject rule scoped by ``workflows = [...]`` to names none of the checked
    workflows has (a typo applies it to nothing): one note each, at its line. A note,
    not a finding: a check of part of a project need not read every workflow."""
    notes = []
    for policy in policies:
        missing = [w for w in policy.workflows if w not in names]
        if policy.workflows and len(missing) == len(policy.workflows):
            shown = ", ".join(sorted(names)) or "none"
            notes.append(f"{policy.file}:{policy.line}: {policy.rule} applies to workflows "
                         f"{list(policy.workflows)}, none of which this check read "
                         f"(checked: {shown}); it proved nothing here")
    return notes


def unread_pyprojects(folders: Sequence[Path]) -> list[str]:
    """A note for each ``pyproject.toml`` nearest one of ``folders`` (those of the
    modules a check read its workflows from) that holds ``[tool.stepswitch]`` settings
    but is not the one read (that is found from the working directory up): a check run
    from another folder would otherwise pass without the project's rules, and say
    nothing of them."""
    try:
        read = _pyproject(None)
    except UserError:
        return []  # said by the reader of the settings
    read_path = read[0] if read is not None else None
    notes: list[str] = []
    seen: set[Path] = set()
    for folder in folders:
        try:
            near = _pyproject(folder)
        except UserError:
            continue
        if near is None or near[0] == read_path or near[0] in seen:
            continue
        seen.add(near[0])
        tool = near[2].get("tool", {})
        if isinstance(tool, dict) and tool.get("stepswitch"):
            shown = display_path(str(near[0]))
            notes.append(f"{shown} has [tool.stepswitch] settings this check did not read: "
                         "they are read from the working directory up (run it from "
                         f"{display_path(str(near[0].parent)) or '.'})")
    return notes
