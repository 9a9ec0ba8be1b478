"""Reviewing changes: compare two workflows (``diff``) and check recorded runs (``trail``).

:func:`diff_specs` sorts every difference between two :class:`WorkflowSpec` values by
whom it breaks (``state``, ``model``, ``safety``, ``structure``, ``cosmetic``);
:func:`check_trail` checks the pins of a recorded run (call ids, outputs, pending
approvals) and, given a spec, that every step is one the machine allows. Both are pure:
frozen values in, frozen values out; the CLI (``stepswitch diff``/``trail``) reads files
and writes formats.
"""

from stepswitch.review.diff import CATEGORIES, Category, Change, SpecDiff, diff_specs
from stepswitch.review.trail import (
    Finding,
    Trail,
    TrailError,
    TrailItem,
    TrailReport,
    check_trail,
    read_trail,
    responses_items,
)

__all__ = [
    "CATEGORIES",
    "Category",
    "Change",
    "Finding",
    "SpecDiff",
    "Trail",
    "TrailError",
    "TrailItem",
    "TrailReport",
    "check_trail",
    "diff_specs",
    "read_trail",
    "responses_items",
]
