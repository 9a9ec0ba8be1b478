"""Module-level parts of random flows (generated runners import them by path)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

import stepswitch as ss


class Num(BaseModel):
    """The value every node of a random flow takes and gives."""

    value: int
    tag: Literal["a", "b", "c"]


def _tagged(value: int) -> Num:
    return Num(value=value, tag="abc"[value % 3])


@ss.step
def inc(num: Num) -> Num:
    return _tagged(num.value + 1)


@ss.step
def double(num: Num) -> Num:
    return _tagged(num.value * 2)


@ss.step
async def halve(num: Num) -> Num:
    return _tagged(num.value // 2)


@ss.step
def keep(ctx: ss.RunContext[object], num: Num) -> Num:
    return num


STEPS = {"inc": inc, "double": double, "halve": halve, "keep": keep}


def is_even(num: Num) -> bool:
    return num.value % 2 == 0


def is_big(num: Num) -> bool:
    return num.value > 5


PREDICATES = (is_even, is_big)
