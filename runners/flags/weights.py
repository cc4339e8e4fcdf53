"""``--weights-dir DIR`` of ``asymgames rollouts``: the trained model's new weights while the run
plays, from a trainer outside the process (``engine.rollouts.weights_dir``). The model is the one
model of the trained seats, on a vLLM server the run names, which loads each version by its
runtime adapter endpoints (``engine.serving.swap.VllmAdapters``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from engine.backends import split_name
from engine.plan import Grid
from engine.policies import PolicyFactory, is_model
from engine.rollouts import PolicyWeights, Settings, read_pins

if TYPE_CHECKING:
    from engine.records import RunDir


def add_weights_argument(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--weights-dir", type=Path, metavar="DIR", help=(
        "new weights while the run plays: each PEFT adapter folder a trainer renames into DIR is loaded into the trained "
        "model's vLLM server and plays the games that start after (the last one DIR holds at the start, else the base model, first)"))


def weights_model(plan: Grid, settings: Settings, factory: PolicyFactory) -> str:
    """The model whose weights ``--weights-dir`` swaps: the one model of the trained seats, on a
    vLLM server the run names. ValueError, one line, where there is not one such model."""
    models = sorted({name for roster in plan.agent_rosters() for role, name in roster.items()
                     if is_model(name) and (settings.trained is None or role in settings.trained)})
    if len(models) != 1:
        raise ValueError(f"the trained seats are played by {len(models)} models ({', '.join(models) or 'none'}); new "
                         "weights are one model's: name its seats with --train")
    model = models[0]
    provider, name = split_name(model)
    hub = factory.hub
    from engine.serving import served_model

    if hub.settings.endpoint(provider).kind != "vllm" or served_model(provider, name, hub.explicit_url(provider)) is not None:
        raise ValueError(f"{model} is not on a vLLM server the run names; new weights are loaded by vLLM's runtime "
                         "adapter endpoints: start it with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, "
                         "name it with --vllm-url")
    if "," in (hub.settings.base_url(provider, hub.environ) or ""):
        raise ValueError(f"{model} is on several vLLM servers (replicas); new weights are loaded into one: name one with --vllm-url")
    return model


def policy_weights(model: str, factory: PolicyFactory, run: RunDir) -> PolicyWeights:
    """The weights of ``model`` on its vLLM server, kept in ``run`` (``weights.jsonl``), numbered
    on from the versions the run's earlier processes played."""
    from engine.serving import VllmAdapters

    provider, name = split_name(model)
    hub = factory.hub
    url = hub.settings.base_url(provider, hub.environ)
    assert url is not None, "weights_model checks that the run names the server"
    earlier = read_pins(run.path)
    weights = PolicyWeights(model, VllmAdapters(url, name), first=max((w.version for w in earlier.values()), default=-1) + 1)
    weights.attach(run.path)
    return weights
