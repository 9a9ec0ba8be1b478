"""A durable run's pause: the calls waiting for a human, and the decisions taken.

The workflow's ``decide`` update and its ``interruptions`` query read this; the driver
(:class:`stepswitch.temporal._driver.Driver`) fills it when the run pauses and applies
it to the run's state when every call is decided. A pending call is keyed by
``(path, call id)``, as ``RunState`` keys its decisions: a flow's fan-out branches may
pause on calls of the same id at once.
"""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from stepswitch.runtime.items import ToolApprovalItem
from stepswitch.runtime.result import RunResult
from stepswitch.runtime.state import RunState
from stepswitch.temporal._messages import Decision, Interruption

__all__ = ["Approvals", "Key"]

Key = tuple[tuple[str, ...], str]
"""A pending call: ``(path, call id)``, the path being its ``ToolApprovalItem.run_path``."""


def _where(path: tuple[str, ...]) -> str:
    """A call's path as messages show it: ``flow:NODE#0``, nested runs after a ``/``."""
    return "/".join(path) or "the run itself"


def _verdict(approved: bool) -> str:
    return "approved" if approved else "rejected"


def _listing(keys: list[Key]) -> str:
    """Pending calls by id, each with its path when another shares its id."""
    ids = [k[1] for k in keys]
    return ", ".join(
        f"{k[1]} at {_where(k[0])}" if ids.count(k[1]) > 1 else k[1]
        for k in sorted(keys, key=lambda k: (k[1], k[0]))
    ) or "none"


class Approvals:
    """The calls of the run's pause and what was decided about them."""

    def __init__(self) -> None:
        self.pending: dict[Key, Interruption] = {}
        """The calls waiting for a decision now."""
        self.paused: dict[Key, ToolApprovalItem] = {}
        """The pause's calls (decided or not), until the next pause."""
        self.decisions: dict[Key, Decision] = {}
        """This pause's decisions, until they are applied to the run's state."""
        self.decided: dict[Key, bool] = {}
        """Every call decided so far and how (a decision cannot be changed)."""
        self.waiting = False
        """The run is at its pause, waiting for decisions."""

    def pause(self, result: RunResult) -> None:
        """Wait for decisions on ``result``'s pending approvals."""
        self.paused = {(i.run_path, i.call_id): i for i in result.interruptions}
        self.pending = {
            key: Interruption(i.call_id, i.name, i.arguments, i.agent, list(i.run_path))
            for key, i in self.paused.items()
        }
        for key in self.pending:
            # a new call under a decided call's key (a flow's loop back to a node whose
            # model numbers calls per response, call_0 each round) waits afresh
            self.decided.pop(key, None)

    def apply(self, state: RunState) -> list[tuple[str, bool]]:
        """Approve or reject each decided call in ``state``; the decisions taken, as
        ``(call id, approved)``, in the order they came."""
        for key, decision in self.decisions.items():
            item = self.paused[key]  # the item: its path says which call, not its id alone
            if decision.approve:
                state.approve(item)
            else:
                state.reject(item, decision.message)
        taken = [(key[1], d.approve) for key, d in self.decisions.items()]
        self.decisions = {}
        return taken

    def check(self, decision: Decision, *, early: bool = False) -> Key | None:
        """Refuse a decision the run cannot take; else the call it decides (``early``:
        the validator, which may run before the run has come back to its pause; it
        checks what it can, and names no call). A changed machine is not refused here:
        the accepted update fails the run, loudly."""
        call_id = decision.call_id
        path = None if decision.path is None else tuple(decision.path)
        if early and not self.waiting:
            done = [k for k in self.decided if k[1] == call_id and path in (None, k[0])]
            if done:
                raise self._already(done[-1])
            return None
        if path is not None:
            key: Key | None = (path, call_id)
        else:
            named = [k for k in self.paused if k[1] == call_id]
            if len(named) > 1:
                calls = ", ".join(
                    f"{self.paused[k].name} at {_where(k[0])}"
                    + (f" ({_verdict(self.decided[k])})" if k in self.decided else "")
                    for k in named
                )
                choices = " or ".join(repr(list(k[0])) for k in named)
                raise ApplicationError(
                    f"call id {call_id!r} names {len(named)} pending calls ({calls}); say "
                    f"which with the decision's path: {choices}",
                    type="AmbiguousCall",
                )
            key = named[0] if named else next(
                (k for k in reversed(self.decided) if k[1] == call_id), None)
        if key is not None and key in self.decided:
            raise self._already(key)
        if key is None or key not in self.pending:
            named_as = call_id if path is None else f"{call_id} at {_where(path)}"
            raise ApplicationError(
                f"no approval is pending for call id {named_as!r} "
                f"(pending: {_listing(list(self.pending))})",
                type="UnknownCall",
            )
        return key

    def record(self, decision: Decision) -> str:
        """Take ``decision`` (refused with the reason when the run cannot); what the
        update answers: ``approved NAME (CALL ID)``."""
        key = self.check(decision)  # raises with the reason
        assert key is not None
        self.decisions[key] = decision
        self.decided[key] = decision.approve
        item = self.pending.pop(key)
        return f"{_verdict(decision.approve)} {item.name} ({item.call_id}){self._at(key)}"

    def _at(self, key: Key) -> str:
        """`` at PATH`` when another call of this pause shares ``key``'s id, else ``""``:
        messages name a call by its id alone unless that is ambiguous."""
        shared = any(k[1] == key[1] and k != key for k in self.paused)
        return f" at {_where(key[0])}" if shared else ""

    def _already(self, key: Key) -> ApplicationError:
        return ApplicationError(
            f"call {key[1]!r}{self._at(key)} was already decided ({_verdict(self.decided[key])}); "
            "a decision cannot be changed",
            type="AlreadyDecided",
        )
