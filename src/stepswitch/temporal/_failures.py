"""How the workflow fails: a tool's or a step's error from the worker, an activity's
failure as the error the loop sees, and the stop that leaves the loop for good."""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

from stepswitch.errors import ModelProviderError, StepFailure, ToolFailure
from stepswitch.temporal._codec import error_class

if TYPE_CHECKING:
    from stepswitch.runtime.state import RunState

__all__ = ["NOT_RETRYABLE", "StepFailure", "StopRun", "ToolFailure", "activity_error"]

NOT_RETRYABLE = ["UserError", "StateError", "ModelBehaviorError", "AssertionError",
                 "ScriptExhausted", "SessionError", "SessionConflict"]
"""Error types an activity never retries: a retry would fail the same way."""


class StopRun(BaseException):
    """Leaves the loop for good (the machine changed, or continue-as-new): never an
    outcome the loop could turn into a tool's error output."""

    def __init__(self, error: ApplicationError | None = None, state: RunState | None = None):
        super().__init__()
        self.error = error
        self.state = state



def activity_error(exc: ActivityError, what: str) -> Exception:
    cause = exc.cause
    if isinstance(cause, ApplicationError):
        cls = error_class(cause.type)
        if cls is not None:
            return cls(cause.message)
        return ToolFailure(cause.message, cause.type)
    if isinstance(cause, TimeoutError):
        return ModelProviderError(f"{what} timed out on every attempt ({cause.message})")
    return ModelProviderError(f"{what} failed: {cause or exc}")



