"""Deterministic test doubles, shipped for users (like the SDK's ``agents.testing``).

``ScriptedModel(steps)`` answers each model call with the next step: a list of
output items made with :func:`function_call` and :func:`assistant_message`, or an
exception to raise. It records every call and fails loudly on a call past the end
of its script; ``assert_complete()`` checks that every step was used::

    model = ScriptedModel([
        [function_call("lookup_order", {"order_id": 42})],
        [assistant_message("Order 42 has shipped.")],
    ])
    result = machine.run_sync("where is 42?", model=model)
    model.assert_complete()

``OpenAIServer`` (from :mod:`stepswitch.models.openai_server`) is the same idea over
real HTTP: a scripted OpenAI-compatible server on 127.0.0.1 for the real client;
``AgentsAPIServer`` (from :mod:`stepswitch.models.agents_api_server`) serves the hosted
Agents API's sessions the same way, with ``Fault`` and ``session_failed`` to inject
what a real network and a real model do.

This module gathers the doubles; each is defined in the room it belongs to
(``ScriptedModel`` is a model: :mod:`stepswitch.models.scripted`), so the session
conformance suite can drive runs with it while this module hands that suite out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepswitch.models.scripted import (
    RecordedCall,
    ScriptedModel,
    ScriptExhausted,
    ScriptStep,
    assistant_message,
    function_call,
)

if TYPE_CHECKING:
    from stepswitch.models.agents_api_server import AgentsAPIServer, Fault, session_failed
    from stepswitch.models.openai_server import OpenAIServer

__all__ = [
    "AgentsAPIServer",
    "Fault",
    "OpenAIServer",
    "RecordedCall",
    "ScriptExhausted",
    "ScriptStep",
    "ScriptedModel",
    "assistant_message",
    "function_call",
    "replay",
    "session_conformance",
    "session_failed",
]


def __getattr__(name: str) -> Any:
    # The HTTP server pulls in the http and threading machinery: load it only when a
    # test asks for it, so `import stepswitch` stays light.
    if name == "OpenAIServer":
        from stepswitch.models.openai_server import OpenAIServer

        return OpenAIServer
    if name in ("AgentsAPIServer", "Fault", "session_failed"):
        from stepswitch.models import agents_api_server

        return getattr(agents_api_server, name)
    if name == "Step":
        # One script step was called Step until 2026-11-30, the name the flows' @ss.step
        # node (ss.Step) now has.
        import warnings

        warnings.warn("stepswitch.testing.Step is now ScriptStep", DeprecationWarning,
                      stacklevel=2)
        return ScriptStep
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def session_conformance(factory: Any = None, **options: Any) -> type:
    """The conformance suite for a session backend, as a pytest test class (see
    :mod:`stepswitch.sessions.conformance`; it loads pytest only when called)."""
    from stepswitch.sessions.conformance import session_conformance as make

    return make(factory, **options)


def replay(trail: Any, machine: Any, *, context: Any = None) -> Any:
    """The first place ``trail`` (a recorded run) diverges on ``machine`` today, as a
    :class:`~stepswitch.review.replay.Divergence`; None when it goes the same way (see
    :func:`stepswitch.review.replay.replay`)."""
    from stepswitch.review.replay import replay as run

    return run(trail, machine, context=context)
