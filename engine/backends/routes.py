"""Per-game routing of a model's calls: the request fields that send one game's calls to other
weights on the same server (a LoRA adapter loaded while the run plays: vLLM's adapter name, a
llama.cpp router's model), set when the game starts and read by each call the game makes.

``ROUTES`` is a context variable: a game's calls run in tasks started from the game's own context,
so what is set as a game starts holds for every call of that game and of no other
(``engine.rollouts.weights`` sets it, in the process that plays the game). It maps the model as
the server is asked for it (the name after the provider) to the fields that replace the request's
own (``{"model": "policy@3"}``); ``with_route`` applies them, for the lean client and the SDK alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

ROUTES: ContextVar[Mapping[str, Mapping[str, Any]]] = ContextVar("ROUTES", default={})


def routed(model: str) -> Mapping[str, Any]:
    """The fields replacing the request's own for this game's calls to ``model`` (empty: none)."""
    return ROUTES.get().get(model, {})


def with_route(fields: dict[str, Any], model: str) -> dict[str, Any]:
    """A request's ``fields`` with those of this game's route to ``model`` over them (``fields``
    itself where the game has none): every client's body of a call to ``model`` is made with it."""
    route = routed(model)
    return {**fields, **route} if route else fields
