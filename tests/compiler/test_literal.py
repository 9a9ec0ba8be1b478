"""IR literals: they rebuild the value, fit the line width, and never paste text."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stepswitch.compiler._literal import class_names, literal_lines, str_width
from stepswitch.ir import OutputRule, RunFunction, StepRule, ToolEntry


@dataclass(frozen=True)
class Box:
    name: str
    items: tuple[Any, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    flag: bool = False


NAMESPACE = {"Box": Box, "ToolEntry": ToolEntry, "RunFunction": RunFunction,
             "OutputRule": OutputRule, "StepRule": StepRule}


def rebuild(lines: list[str]) -> Any:
    """Run ``x = <literal>`` (one statement, parsed first) and return ``x``."""
    text = "\n".join(lines).lstrip()
    tree = ast.parse(text)
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Assign)
    namespace = dict(NAMESPACE)
    exec(compile(tree, "<literal>", "exec"), namespace)
    return namespace["x"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=150),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=30), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=int(os.environ.get("LITERAL_EXAMPLES", "150")), deadline=None)
@given(value=json_values, indent=st.integers(0, 4))
def test_json_values_rebuild_and_fit(value: Any, indent: int) -> None:
    lines = literal_lines(value, indent=indent, prefix="x = ")
    assert lines[0].startswith("    " * indent + "x = ")
    assert rebuild(lines) == value
    # only a number too long for the line (at a deep indent) may overflow it
    assert all(str_width(line) <= 100 or line.strip().rstrip(",")[-1].isdigit()
               for line in lines)
    with_comma = literal_lines(value, indent=indent, prefix="x = ", suffix=",")
    assert with_comma[-1].endswith(",") and rebuild(with_comma) == (value,)


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=400))
def test_any_string_is_one_safe_literal(text: str) -> None:
    lines = literal_lines(text, indent=2, prefix="x = ")
    assert rebuild(lines) == text
    assert all(str_width(line) <= 100 for line in lines)


def test_dataclass_defaults_are_left_out_and_names_collected() -> None:
    entry = ToolEntry("t", "d", {}, RunFunction("m:f", approval="always"))
    lines = literal_lines(entry, prefix="x = ")
    assert "strict" not in "".join(lines) and "kind" not in "".join(lines)
    assert rebuild(lines) == entry
    assert class_names(entry) == {"ToolEntry", "RunFunction"}
    # a default of another type is still written (1 == True in Python)
    assert "flag=1" in literal_lines(Box("b", flag=1))[0]  # type: ignore[arg-type]


def test_a_long_table_breaks_one_element_per_line_with_trailing_commas() -> None:
    box = Box("b" * 50, items=tuple(range(30)), extra={"k": "v" * 90})
    lines = literal_lines(box, prefix="x = ")
    assert lines[0] == "x = Box("
    assert lines[1] == '    name="' + "b" * 50 + '",'  # double quotes, as ruff format writes
    assert lines[-1] == ")"
    assert "        29," in lines  # one element per line, trailing comma
    assert rebuild(lines) == box
    single = literal_lines((1,), prefix="x = ")
    assert single == ["x = (1,)"] and rebuild(single) == (1,)


def test_values_without_a_literal_are_refused() -> None:
    with pytest.raises(TypeError, match="no Python literal"):
        literal_lines({"x": object()})
    with pytest.raises(TypeError, match="only str keys"):
        literal_lines({1: "x"})
    with pytest.raises(ValueError, match="no Python literal"):
        literal_lines(float("nan"))


@pytest.mark.parametrize("text", ["plain", "it's", 'say "hi"', "both ' and \"", "back\\slash\n"])
def test_strings_are_written_in_double_quotes_unless_that_needs_escapes(text: str) -> None:
    [line] = literal_lines(text)
    assert eval(line) == text
    # as ruff format: double quotes unless single ones need fewer escapes
    assert line[0] == ('"' if text.count('"') <= text.count("'") else "'")
