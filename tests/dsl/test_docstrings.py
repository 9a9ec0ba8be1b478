"""``parse_docstring`` reads a tool's docstring exactly as ``docstring_parser.parse`` does,
while skipping the NumPy and Epydoc parsers when the text cannot hold their sections."""

from __future__ import annotations

import random
from typing import Any

import docstring_parser
import pytest

from stepswitch.dsl.tools import parse_docstring

GOOGLE = '''Look up an order by id.

    Args:
        order_id: The order's number, as printed on the receipt.
        reason (str): Why: for the ledger.
    Returns:
        The order's line.
    '''
NUMPY = '''Refund an order.

    Parameters
    ----------
    order_id : int
        The order to refund.

    Returns
    -------
    str
    '''
REST = '''Refund an order.

    :param order_id: The order to refund.
    :returns: what happened
    '''
EPYDOC = '''Refund an order.

    @param order_id: The order to refund.
    @return: what happened
    '''
DEPRECATED = '''Old tool.

    .. deprecated:: 1.2
        Use the new one.
    '''

FRAGMENTS = [
    "Look up an order.",
    "",
    "A longer account: it spans\n    two lines.",
    "Args:\n        order_id: The order.",
    "Args:\n        order_id (int): The order.\n        reason: Why.",
    "Arguments:\n        x: an x",
    "Raises:\n        ValueError: when bad.",
    "Returns:\n        str: the text.",
    "Example:\n        >>> lookup(1)",
    ":param x: an x",
    ":param int y: a y\n    :returns: nothing",
    "@param x: an x",
    "Parameters\n    ----------\n    x : int\n        an x",
    "Notes\n    -----\n    Something.",
    ".. deprecated:: 2.0",
    "Trailing colon:",
    "key: value in prose",
    "an email@example.com address",
    "a range 1--2 of pages",
    "An ellipsis... in prose.",
]


def _shape(doc: docstring_parser.Docstring) -> Any:
    return (
        doc.style,
        doc.short_description,
        doc.long_description,
        doc.blank_after_short_description,
        doc.blank_after_long_description,
        [(type(m).__name__, m.args, m.description) for m in doc.meta],
    )


@pytest.mark.parametrize(
    "text", [GOOGLE, NUMPY, REST, EPYDOC, DEPRECATED, "", "One line.", "Two\n\nparagraphs."]
)
def test_each_style_reads_as_docstring_parser_reads_it(text: str) -> None:
    assert _shape(parse_docstring(text)) == _shape(docstring_parser.parse(text))


def test_random_mixtures_read_the_same() -> None:
    rng = random.Random(10)
    for _ in range(400):
        parts = rng.sample(FRAGMENTS, rng.randint(1, 4))
        text = "\n\n    ".join(parts)
        assert _shape(parse_docstring(text)) == _shape(docstring_parser.parse(text)), text


def test_a_google_docstring_skips_the_numpy_and_epydoc_parsers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The point of it: their regular expressions are most of a first tool's cost."""

    def refuse(text: str) -> Any:
        raise AssertionError("parsed with a style that cannot match")

    monkeypatch.setattr(docstring_parser.numpydoc, "parse", refuse)
    monkeypatch.setattr(docstring_parser.epydoc, "parse", refuse)
    doc = parse_docstring(GOOGLE)
    assert [p.arg_name for p in doc.params] == ["order_id", "reason"]
    assert doc.params[1].description == "Why: for the ledger."
