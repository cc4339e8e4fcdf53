"""The Einstein game's parameters: the number of blocks, the action modes, the verifier, the prompt,
and switches for the reference code's known quirks. Each default is the reference code's behaviour,
but one: a game solved on its last step is a success, as the paper's text says
(``success_on_last_step``; false gives the code's rule)."""

from __future__ import annotations

from typing import ClassVar

import msgspec

from ..base import InvalidParameter
from .board import MAX_BLOCKS, MIN_BLOCKS
from .validity import MODES

VERIFIERS = ("none", "affordance", "communication", "reasoning")
PROMPTS = ("llama", "gpt")
DEFAULT_BUDGET = 2_000_000
MAX_BUDGET = 20_000_000  # states the planner may expand: ten times the default
MAX_CANDIDATES = 16


def split_modes(actions: str) -> tuple[str, str]:
    """(player1's mode, player2's mode) from ``"share_ask"`` or ``"share_ask/ask"``."""
    first, _, second = actions.partition("/")
    return first, second or first


class EinsteinParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="game", tag="einstein"):
    blocks: int = 4
    actions: str = "share_ask"
    verifier: str = "none"
    candidates: int = 4
    random_guess: bool = True
    success_on_last_step: bool = True
    notices: bool = False
    planner_budget: int = DEFAULT_BUDGET
    prompt: str = "llama"
    cot: bool = True
    seek_answers: bool = True
    fix_guess_flag: bool = False
    fix_affordance: bool = False
    fix_communication: bool = False
    fix_reasoning: bool = False

    HELP: ClassVar[dict[str, str]] = {
        "blocks": f"blocks N, {MIN_BLOCKS} to {MAX_BLOCKS} (the paper: 4, 5, 6)",
        "actions": "action mode: share_ask, share, ask or none; player1/player2 for mismatched modes (share_ask/ask)",
        "verifier": "environment verifier choosing among sampled candidates: none, affordance, communication, reasoning",
        "candidates": f"candidate replies sampled per step when a verifier is on, 2 to {MAX_CANDIDATES}",
        "random_guess": "a physically possible but invalid move still reaches the board (the reference's default)",
        "success_on_last_step": (
            "a game solved on its last step counts as a success, as the paper says (\"completed within 30 steps\"); "
            "false: the reference code's rule, a failure"
        ),
        "notices": "tell the agent why its last action failed (the reference only marks it failed)",
        "planner_budget": f"most states the optimal planner expands per instance, 1 to {MAX_BUDGET:_}",
        "prompt": "llama (the paper's prompts for open models) or gpt (its GPT-4o prompt; share_ask with CoT only)",
        "cot": "ask for <THINK> reasoning before the <ACTION>",
        "seek_answers": "an ask-mode player may answer its partner's ask (false: the reference's mismatched-mode class)",
        "fix_guess_flag": "a guess the board accepts is logged as succeeded (the reference logs it as failed)",
        "fix_affordance": "the affordance verifier rejects replies that cannot be read (the reference passes them)",
        "fix_communication": "the communication verifier rejects asks about blocks the player can place (the reference passes every ask)",
        "fix_reasoning": "the reasoning verifier accepts an ask-mode answer (the reference rejects it)",
    }

    @property
    def modes(self) -> tuple[str, str]:
        return split_modes(self.actions)

    def check(self) -> None:
        if not isinstance(self.blocks, int) or not MIN_BLOCKS <= self.blocks <= MAX_BLOCKS:
            raise InvalidParameter("blocks", f"blocks must be an integer from {MIN_BLOCKS} to {MAX_BLOCKS}, got {self.blocks!r}")
        parts = self.actions.split("/")
        if len(parts) > 2 or any(p not in MODES for p in parts):
            raise InvalidParameter("actions", f"actions must be one of {', '.join(MODES)}, or two joined by '/', got {self.actions!r}")
        if self.verifier not in VERIFIERS:
            raise InvalidParameter("verifier", f"verifier must be one of {', '.join(VERIFIERS)}, got {self.verifier!r}")
        if self.verifier == "communication" and "none" in self.modes:
            raise InvalidParameter("verifier", "the communication verifier does not apply to the none action mode")
        if not isinstance(self.candidates, int) or not 2 <= self.candidates <= MAX_CANDIDATES:
            raise InvalidParameter("candidates", f"candidates must be an integer from 2 to {MAX_CANDIDATES}, got {self.candidates!r}")
        if not isinstance(self.planner_budget, int) or not 1 <= self.planner_budget <= MAX_BUDGET:
            raise InvalidParameter("planner_budget", f"planner_budget must be an integer from 1 to {MAX_BUDGET:_}, got {self.planner_budget!r}")
        if self.prompt not in PROMPTS:
            raise InvalidParameter("prompt", f"prompt must be llama or gpt, got {self.prompt!r}")
        if self.prompt == "gpt" and (self.modes != ("share_ask", "share_ask") or not self.cot):
            raise InvalidParameter("prompt", "the gpt prompt exists for share_ask with cot only")

    def labels(self) -> dict[str, str]:
        labels = {"N": str(self.blocks), "actions": self.actions, "verifier": self.verifier}
        if self.verifier != "none" and self.candidates != 4:
            labels["candidates"] = str(self.candidates)
        if not self.cot:
            labels["cot"] = "no"
        if self.prompt != "llama":
            labels["prompt"] = self.prompt
        for name in ("notices", "fix_guess_flag", "fix_affordance", "fix_communication", "fix_reasoning"):
            if getattr(self, name):
                labels[name] = "yes"
        if not self.random_guess:
            labels["random_guess"] = "no"
        if not self.success_on_last_step:
            labels["success_on_last_step"] = "no"
        if not self.seek_answers:
            labels["seek_answers"] = "no"
        if self.planner_budget != DEFAULT_BUDGET:
            labels["planner_budget"] = str(self.planner_budget)
        return labels

    def normal(self) -> EinsteinParams:
        """One spelling: ``x/x`` as ``x``; the verifier's settings only with that verifier on."""
        first, second = self.modes
        changes: dict = {"actions": first if first == second else f"{first}/{second}"}
        if self.verifier == "none":
            changes["candidates"] = 4
        for name, verifier in (("fix_affordance", "affordance"), ("fix_communication", "communication"), ("fix_reasoning", "reasoning")):
            if self.verifier != verifier:
                changes[name] = False
        if "ask" not in (first, second):
            changes["seek_answers"] = True
        return msgspec.structs.replace(self, **changes)


__all__ = ["EinsteinParams", "PROMPTS", "VERIFIERS", "split_modes"]
