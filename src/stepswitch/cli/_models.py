"""The model a command runs on, from its ``--model``, ``--base-url`` and ``--api`` flags.

``--model`` is a model name (default ``$STEPSWITCH_MODEL`` or :data:`DEFAULT_MODEL`),
``scripted:FILE.json`` (a scripted transcript), or ``FILE.py:NAME``, an object with
``async get_response(request)`` defined in the user's code. ``run``, ``chat`` and
``worker`` read them alike.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from stepswitch.errors import UserError
from stepswitch.runtime.model import Model, ModelRequest, ModelResponse
from stepswitch.targets.load import import_file

if TYPE_CHECKING:
    from stepswitch.models.provider import TranscriptModel

__all__ = ["DEFAULT_MODEL", "calls_models", "is_transcript", "load_model", "model_for",
           "user_model"]

DEFAULT_MODEL = "gpt-4.1"
_SCRIPTED = "scripted:"


def calls_models(machine: Any) -> bool:
    """False for a flow whose nodes are all steps (it makes no model call)."""
    flow = machine.ir.flow
    return flow is None or any(n.kind == "agent" for n in flow.nodes)


def is_transcript(model: Model | None) -> TypeGuard[TranscriptModel]:
    """Whether ``model`` is a scripted transcript (``--model scripted:FILE.json``)."""
    from stepswitch.models.provider import TranscriptModel

    return isinstance(model, TranscriptModel)


def model_for(args: argparse.Namespace) -> Model:
    """The model ``--model``, ``--base-url`` and ``--api`` name; without ``--stream`` it
    is called once per turn, never streamed."""
    # imported here: only a command that calls a model loads the openai client
    from stepswitch.cli._agents_api import wait_timeout
    from stepswitch.models.provider import OpenAIProvider, TranscriptModel

    name = args.model or os.environ.get("STEPSWITCH_MODEL") or DEFAULT_MODEL
    if args.model is not None:
        mine = user_model(args.model)  # FILE.py:NAME, as `stepswitch worker` takes it
        if mine is not None:
            wait_timeout(args, args.model, yours=True)
            return mine if args.stream else _Unstreamed(mine)
    wait = wait_timeout(args, name)
    if name.startswith(_SCRIPTED):
        path = name[len(_SCRIPTED) :]
        if not path:
            raise UserError("--model scripted:FILE.json needs a file name")
        unread = [f for f, given in (("--base-url", getattr(args, "base_url", None)),
                                     ("--api chat", getattr(args, "api", None) == "chat"))
                  if given]
        if unread:  # said, not passed over: they choose a server for a model name
            print(f"stepswitch: note: {' and '.join(unread)} choose the server a model name "
                  "is sent to; a scripted model answers in this process, so "
                  f"{'they are' if len(unread) > 1 else 'it is'} not used", file=sys.stderr)
        return TranscriptModel.from_file(path)
    base_url = args.base_url or os.environ.get("OPENAI_BASE_URL")
    if base_url and not base_url.startswith(("http://", "https://")):
        where = "--base-url" if args.base_url else "OPENAI_BASE_URL"
        raise UserError(
            f"{where} {base_url!r} is not an http(s) URL; e.g. http://localhost:11434/v1"
        )
    key = os.environ.get("OPENAI_API_KEY")
    if not key and not base_url:
        raise UserError(
            "no OpenAI API key: set OPENAI_API_KEY, or pass --base-url to a server that "
            "needs none, or --model scripted:FILE.json"
        )
    model: Model
    if args.api == "agents":
        from stepswitch.cli._agents_api import agents_model

        model = agents_model(name, base_url, key or "unused", wait)
    else:
        provider = OpenAIProvider(api=args.api, base_url=base_url, api_key=key or "unused")
        model = provider.get_model(name)
    return model if args.stream else _Unstreamed(model)


class _Unstreamed:
    """A model seen without its streaming side: the run calls it once per turn."""

    def __init__(self, model: Model) -> None:
        self._model = model
        # what spans name the model by (see stepswitch.runtime.tracing)
        self.model = getattr(model, "model", None)
        self.provider_name = getattr(model, "provider_name", None)

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        return await self._model.get_response(request)


def load_model(args: argparse.Namespace) -> Any:
    """The worker's model, read as ``stepswitch run`` reads ``--model`` (None: the
    agents' own, else the default model)."""
    if args.model is None:
        return None
    mine = user_model(args.model)
    if mine is not None:  # the object itself: the worker only calls get_response
        return mine
    return model_for(argparse.Namespace(**{**vars(args), "stream": False}))


def user_model(spec: str) -> Any | None:
    """``FILE.py:NAME``: the model object ``NAME`` of that file; None when ``spec`` is
    not of that form (a model name, ``scripted:FILE.json``)."""
    file, sep, name = spec.rpartition(":")
    if not (sep and file.endswith(".py")):
        return None
    path = Path(file)
    if not path.is_file():
        raise UserError(f"--model {spec}: no file {file}")
    module = import_file(path)
    model = getattr(module, name, None)
    if model is None or not hasattr(model, "get_response"):
        raise UserError(
            f"--model {spec}: {file} has no model named {name!r} (an object with "
            "async get_response(request))"
        )
    return model
