"""The one exception tree of stepswitch.

::

    StepswitchError                      every error stepswitch raises on purpose
    ├── UserError                        the caller declared or called something wrong
    │   ├── CompileError                 the analyzer found errors; carries the Report
    │   ├── LoweringError                a machine's IR holds a word its tables do not know
    │   ├── StateError                   a RunState is tampered, truncated, stale or resumed already
    │   ├── TargetError                  a TARGET (file.py:NAME, module:NAME) does not load
    │   ├── GraphvizNotFound             no Graphviz to draw SVG or PNG with
    │   ├── TrailError                   a recorded run is not a trail (``stepswitch trail``)
    │   ├── ReplayError                  a recording cannot be replayed (``stepswitch replay``)
    │   ├── CaseError                    a recorded case cannot be run (``stepswitch test``)
    │   └── BuildError                   the studio page's data could not be built
    ├── SessionError                     a conversation store refused or failed an operation
    │   └── SessionConflict              another writer changed the session first
    ├── ModelBehaviorError               the model produced something nothing can act on
    │   └── ArgumentError                a call's arguments cannot be used (the model is told)
    ├── ModelProviderError               the model's server failed: unreachable, rate
    │                                    limited or erroring after the client's retries
    ├── MCPServerError                   an MCP server did not start, died, or drifted
    │                                    from its lock; carries .run_data
    ├── ToolFailure                      a tool or hook raised on a Temporal worker
    ├── StepFailure                      a flow's step raised on a Temporal worker
    └── RunLimitError                    a run stopped at a declared limit; carries .run_data
        ├── MaxTurnsExceeded             more model calls than max_turns
        │   └── FlowBudgetExceeded       a flow edge taken more often than its max_uses
        ├── CostLimitExceeded            the run's priced usage passed RunConfig(max_cost_usd=…)
        ├── RunTimeoutError              the run took longer than RunConfig(timeout=…)
        ├── ToolTimeoutError             a tool took longer than function_tool(timeout=…)
        └── GuardrailTripwireTriggered   a guardrail's tripwire fired
            ├── InputGuardrailTripwireTriggered
            ├── OutputGuardrailTripwireTriggered
            ├── ToolInputGuardrailTripwireTriggered    a tool input guardrail said raise
            └── ToolOutputGuardrailTripwireTriggered   a tool output guardrail said raise

Caller mistakes are apart from the model's and from run limits, so a caller can
catch exactly what it can act on. Every message says what happened, where, and
what to do about it. Each class is defined here; the module it belongs to
re-exports it (``stepswitch.review.TrailError``, ``stepswitch.temporal.ToolFailure``).

Apart from the tree, on purpose: the test doubles fail a test the way pytest expects,
with an ``AssertionError`` (and a run treats them like any exception that is not
stepswitch's, so a broken script never reads as a model's mistake); and a warning is
issued, not raised::

    AssertionError
    ├── ScriptExhausted                  a ScriptedModel called past its script (stepswitch.testing)
    └── TrailCaseFailed                  a recorded case's expectations fail (the pytest plugin)
    UserWarning
    └── SDKNotCarriedWarning             from_sdk read a setting stepswitch does not carry out

Exceptions private to a module (``_Stop``, the leaves' ``FileRefused`` and
``JSONLimitError``) are caught where they are raised and turned into one of the above.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "ArgumentError",
    "BuildError",
    "CaseError",
    "CompileError",
    "CostLimitExceeded",
    "FlowBudgetExceeded",
    "GraphvizNotFound",
    "GuardrailTripwireTriggered",
    "InputGuardrailTripwireTriggered",
    "LoweringError",
    "MCPServerError",
    "MaxTurnsExceeded",
    "ModelBehaviorError",
    "ModelProviderError",
    "OutputGuardrailTripwireTriggered",
    "ReplayError",
    "RunLimitError",
    "RunTimeoutError",
    "SessionConflict",
    "SessionError",
    "StateError",
    "StepFailure",
    "StepswitchError",
    "TargetError",
    "ToolFailure",
    "ToolInputGuardrailTripwireTriggered",
    "ToolOutputGuardrailTripwireTriggered",
    "ToolTimeoutError",
    "TrailError",
    "UserError",
]


if TYPE_CHECKING:  # for the type checker only: a runner's import defines no Protocol class
    from collections.abc import Sequence
    from typing import Protocol

    class _Finding(Protocol):
        def format_line(self) -> str: ...

    class _ReportLike(Protocol):
        @property
        def errors(self) -> Sequence[_Finding]: ...


class StepswitchError(Exception):
    """Base class of every error stepswitch raises on purpose.

    ``summary`` is what happened; ``hint``, when there is one, is the advice in Python
    terms (a keyword argument, a ``RunConfig`` field) that the message ends with. The
    command line shows ``summary`` and gives its own advice, in flags."""

    hint: str | None = None

    @property
    def summary(self) -> str:
        text = str(self)
        if self.hint and text.endswith(f"; {self.hint}"):
            return text[: -len(self.hint) - 2]
        return text


class UserError(StepswitchError):
    """A declaration or a call is wrong; the message names the field and the place."""


class CompileError(UserError):
    """``compile()`` refused a workflow whose analysis found errors.

    ``report`` holds every diagnostic, not only the first.
    """

    def __init__(self, report: _ReportLike) -> None:
        self.report = report
        errors = report.errors
        lines = [f"workflow has {len(errors)} error(s); fix them or run `stepswitch check`:"]
        lines.extend(f"  {d.format_line()}" for d in errors)
        super().__init__("\n".join(lines))


class LoweringError(UserError):
    """A machine's IR holds a word of a table's vocabulary that no reader knows: a step
    switch row's ``when`` or ``then``, or a flow exit's ``kind`` (an IR built by hand,
    edited, or written by another stepswitch). Raised when the IR is read into tables,
    before anything runs, the same by the interpreter and by codegen
    (:mod:`stepswitch.vocabulary`). ``where`` is the row's path in the IR
    (``states['triage'].switch[2].then``) and ``word`` the word."""

    def __init__(self, message: str, *, where: str, word: object) -> None:
        super().__init__(message)
        self.where = where
        self.word = word


class StateError(UserError):
    """A run state cannot be trusted: unknown version, tampered, truncated or stale; or one
    state object is resumed a second time."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.hint = hint


class TargetError(UserError):
    """A TARGET (``file.py:NAME``, ``package.module:NAME``, a file or folder) could not
    be resolved to a workflow; the message is one line meant for the terminal as is
    (``stepswitch.targets.load``)."""


class GraphvizNotFound(UserError):
    """No Graphviz executable to render SVG or PNG with (``stepswitch.render``)."""


class TrailError(UserError):
    """The text is not a trail (not JSON, not a run state, not a list of items); the
    message is one line, meant for the terminal as is (``stepswitch.review.trail``)."""


class ReplayError(UserError):
    """The text is not a recording, or cannot be replayed on this workflow; the message
    is one line (``stepswitch.review.replay``)."""


class CaseError(UserError):
    """The file is not a recorded case (or its workflow does not load); one line
    (``stepswitch.review.cases``)."""


class BuildError(UserError):
    """The studio page's data could not be built (a TARGET does not load); one line
    (``stepswitch.studio.server``)."""


class SessionError(StepswitchError):
    """A conversation store (``stepswitch.sessions``) refused or failed an operation: a
    bad session id or URL, an unreachable server, a schema written by a newer
    stepswitch, an operation id reused with other items. When it ends a run,
    ``run_data`` keeps the run so far; its ``to_state()`` re-sends a pending append."""

    def __init__(self, message: str, *, run_data: Any = None, hint: str | None = None) -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.run_data = run_data
        self.hint = hint


class SessionConflict(SessionError):
    """Another writer changed the session since this one loaded it (a stale
    ``expected_version``): two overlapping runs never interleave their items.
    ``found`` is the version the store holds, where the store says."""

    def __init__(
        self, message: str, *, run_data: Any = None, hint: str | None = None,
        found: int | None = None,
    ) -> None:
        super().__init__(message, run_data=run_data, hint=hint)
        self.found = found


class ModelBehaviorError(StepswitchError):
    """The model produced output that nothing on the trusted side can act on."""

    def __init__(self, message: str, *, run_data: Any = None) -> None:
        super().__init__(message)
        self.run_data = run_data


class ArgumentError(ModelBehaviorError):
    """The model's arguments for a call cannot be used; the message says why. The run
    answers the call with it as an error output, so the model can try again
    (``stepswitch.runtime.tools``)."""


class ModelProviderError(StepswitchError):
    """The model's server could not answer: unreachable, timing out, rate limited or
    failing (5xx) after the client's own retries. Retrying later may succeed."""

    def __init__(self, message: str, *, status: int | None = None, run_data: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.run_data = run_data


class RunLimitError(StepswitchError):
    """A run stopped at a limit. ``run_data`` keeps everything the run produced so far.

    ``summary`` is what happened, without the advice to the developer that the full
    message adds (``hint``): it is what a calling model sees when a nested agent-tool
    run stops at its limit.
    """

    def __init__(self, message: str, *, run_data: Any = None, hint: str | None = None) -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.hint = hint
        self.run_data = run_data


class MaxTurnsExceeded(RunLimitError):
    """The run needed more model calls than its ``max_turns`` budget allows."""


class FlowBudgetExceeded(MaxTurnsExceeded):
    """A flow's run would take the edge ``source → target`` (``target`` None: END) more
    often than that edge's ``max_uses``: its loop did not end within its budget. Its
    ``run_data`` keeps the run so far; a state taken from it records the spent edge and
    does not resume (the same edge would be spent again): start a new run."""

    def __init__(self, source: str, target: str | None, used: int, *,
                 run_data: Any = None) -> None:
        super().__init__(
            f"flow edge {source} → {target or 'END'} was taken {used} time(s), its "
            "max_uses: the loop through it did not end within its budget",
            hint="raise max_uses on that edge, or let the loop end sooner, and start a new run",
            run_data=run_data,
        )
        self.source = source
        self.target = target
        self.used = used


class CostLimitExceeded(RunLimitError):
    """The run's priced usage passed ``RunConfig(max_cost_usd=…)``. ``run_data`` keeps
    the run so far; ``spent`` and ``limit`` are in US dollars."""

    def __init__(self, spent: float, limit: float, model: str, *, run_data: Any = None) -> None:
        super().__init__(
            f"the run spent ${spent:.6f} (last call: {model}), past its max_cost_usd "
            f"${limit}",
            hint="raise RunConfig(max_cost_usd=...) or make the run cheaper",
            run_data=run_data,
        )
        self.spent = spent
        self.limit = limit


class RunTimeoutError(RunLimitError):
    """The run took longer than ``RunConfig(timeout=…)`` seconds; what it was awaiting
    (a model call, a tool, a hook) was cancelled. ``run_data`` keeps the run so far."""

    def __init__(self, timeout: float, *, run_data: Any = None) -> None:
        super().__init__(
            f"the run exceeded its timeout of {timeout:g} s and was stopped",
            hint="resume exc.run_data.to_state() to go on, or raise RunConfig(timeout=...)",
            run_data=run_data,
        )
        self.timeout = timeout


class MCPServerError(StepswitchError):
    """An MCP server could not start, failed or died during a call, or lists tools that
    differ from its lock. The message names the server and where it was declared; when
    it ends a run, ``run_data`` keeps the run so far; ``hint`` (for a drift) says how a
    run allows it."""

    def __init__(self, message: str, *, run_data: Any = None, hint: str | None = None) -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.run_data = run_data
        self.hint = hint


class ToolFailure(StepswitchError):
    """A function tool (or a hook) raised on a Temporal worker; ``str()`` is its
    message and ``kind`` its exception's type name. A tool's ``failure_error_function``
    sees it in place of the original exception (``stepswitch.temporal``)."""

    def __init__(self, message: str, kind: str | None) -> None:
        super().__init__(message)
        self.kind = kind


class StepFailure(StepswitchError):
    """A flow's step raised on a Temporal worker: the run fails with the step's
    exception's type name (``kind``) and message, as in-process it fails with the
    exception."""

    def __init__(self, message: str, kind: str | None) -> None:
        super().__init__(message)
        self.kind = kind


class ToolTimeoutError(RunLimitError):
    """A function tool took longer than its ``function_tool(timeout=…)``. The model sees
    it as an error output, unless the tool says ``failure_error_function=None``: then it
    ends the run, with ``run_data``. A synchronous tool's thread cannot be stopped: it
    runs on, but its result is never used."""

    def __init__(self, tool_name: str, timeout: float, *, run_data: Any = None) -> None:
        super().__init__(f"Tool '{tool_name}' timed out after {timeout:g} seconds.",
                         run_data=run_data)
        self.tool_name = tool_name
        self.timeout = timeout


class GuardrailTripwireTriggered(RunLimitError):
    """A guardrail's tripwire fired; ``guardrail_result`` says which and why."""

    def __init__(self, message: str, *, guardrail_result: Any = None, run_data: Any = None) -> None:
        super().__init__(message, run_data=run_data)
        self.guardrail_result = guardrail_result


class InputGuardrailTripwireTriggered(GuardrailTripwireTriggered):
    """An input guardrail of the entry agent tripped before the first model call."""


class OutputGuardrailTripwireTriggered(GuardrailTripwireTriggered):
    """An output guardrail tripped on the final output."""


class ToolInputGuardrailTripwireTriggered(GuardrailTripwireTriggered):
    """A tool input guardrail returned ``raise_exception()``: the call did not run.
    ``guardrail`` is its name, ``output`` what it returned, ``guardrail_result`` the
    ``ToolInputGuardrailResult`` (agent, tool, call id)."""

    def __init__(self, message: str, *, guardrail: str = "", output: Any = None,
                 guardrail_result: Any = None, run_data: Any = None) -> None:
        super().__init__(message, guardrail_result=guardrail_result, run_data=run_data)
        self.guardrail = guardrail
        self.output = output


class ToolOutputGuardrailTripwireTriggered(GuardrailTripwireTriggered):
    """A tool output guardrail returned ``raise_exception()``: the tool ran, and its
    output was not recorded. ``guardrail``, ``output`` and ``guardrail_result`` as for
    :class:`ToolInputGuardrailTripwireTriggered`."""

    def __init__(self, message: str, *, guardrail: str = "", output: Any = None,
                 guardrail_result: Any = None, run_data: Any = None) -> None:
        super().__init__(message, guardrail_result=guardrail_result, run_data=run_data)
        self.guardrail = guardrail
        self.output = output
