"""Rollouts for training: every seat's trajectory through each game (``trajectory``, made by
``build`` from a game's record and full transcript), rewarded as the game names its rewards
(``rewards``), in groups of K games per seed with leave-one-out advantages, or the branches of a
branch run's point (``groups``), played and yielded as they finish (``collect``) or kept in the run directory (``files``), with the
weights a trainer swaps in as the run plays (``weights``; from a folder, ``weights_dir``); one seat played by a client turn by turn (``episodes``), served as
an OpenEnv environment (``openenv``, loaded on first use: it needs the openenv extra)."""

from __future__ import annotations

from engine.lazy import lazy_exports

from engine.rollouts.build import MissingTokens, trajectories
from engine.rollouts.collect import Assembler, GroupStream, Settings, groups_in, play_groups, rollouts, run_groups
from engine.rollouts.episodes import CLIENT, ClientLeft, Episode, EpisodeError, EpisodeHost, Shown
from engine.rollouts.files import GROUPS_FILE, SETTINGS_FILE, GroupFile, save_settings, saved_settings
from engine.rollouts.groups import GroupIds, branch_groups, make_group
from engine.rollouts.rewards import NoRewards, seat_rewards, turn_rewards
from engine.rollouts.trajectory import ChatMessage, Group, Trajectory, TurnStep, Weights, decode_group, encode_group
from engine.rollouts.weights import WEIGHTS_FILE, PolicyWeights, read_pins

__all__ = [
    "CLIENT", "ClientLeft", "Episode", "EpisodeError", "EpisodeHost", "Shown", "GROUPS_FILE", "SETTINGS_FILE", "Assembler", "ChatMessage", "Group", "GroupFile", "GroupIds", "GroupStream", "MissingTokens", "NoRewards", "Settings", "Trajectory", "TurnStep",
    "WEIGHTS_FILE", "PolicyWeights", "Weights", "branch_groups", "decode_group", "encode_group", "groups_in", "make_group", "play_groups", "rollouts",
    "WeightsFolder", "read_pins", "run_groups", "save_settings", "saved_settings", "seat_rewards", "trajectories", "turn_rewards",
]

# ``make_app`` (the OpenEnv server) is loaded when first asked for, and left out of ``__all__``: it
# needs the openenv extra, which not every install has. ``WeightsFolder`` is loaded when first asked
# for too: it brings the serving modules, which only a run that swaps weights needs.
__getattr__, __dir__ = lazy_exports(__name__, {"make_app": ".openenv", "WeightsFolder": ".weights_dir"})
