"""Best of n through the bus: the agent samples the candidates the game asks for, the game chooses
one on the state the turn finds, the agent plays it, and the record and transcript keep them all.
Played with the Einstein game's environment verifiers and its random mover."""

from __future__ import annotations

from bus import Act, YourTurn
from engine import Grid, PolicyFactory, play_game
from puzzles import GAMES


def plan(games: int, verifier: str, candidates: int = 4, strategy: str = "random_mover") -> Grid:
    params = {"blocks": [4], "verifier": [verifier]}
    if verifier != "none":
        params["candidates"] = [candidates]
    return Grid(game="einstein", seeds=games, seed=5, agents=[[strategy, strategy]], params=params)


async def play(config: Grid, index: int):
    seen: list = []
    record = await play_game(config.spec(index), PolicyFactory(), taps=[lambda address, message: seen.append(message)])
    return record, seen


async def test_the_reasoning_verifier_plays_the_first_candidate_in_the_valid_set():
    config = plan(6, "reasoning", candidates=4)
    game = GAMES["einstein"]
    checked = corrected = 0
    for index in range(6):
        record, seen = await play(config, index)
        spec = record.spec
        acts = [m for m in seen if isinstance(m, Act)]
        assert acts and all(len(act.candidates) == 4 and act.chosen is not None for act in acts)
        assert [(t.candidates, t.chosen) for t in record.turn_log] == [(4, act.chosen) for act in acts]
        # An independent replay: the chosen candidate is the first whose action is in the valid set.
        state = game.rules.new(spec.params, spec.seed, tuple(spec.agents), spec.max_turns)
        for act in acts:
            played = act.candidates[act.chosen]
            assert tuple(act.actions) == played.actions and act.reply == played.reply
            valid = state.valid(act.role)
            passing = [i for i, c in enumerate(act.candidates) if c.actions and c.actions[0] in valid]
            if valid and passing:
                assert act.chosen == passing[0]
                checked += 1
                corrected += act.chosen != 0
            state.step(act.role, tuple(act.actions))
        assert record.scores["steps"] == state.steps
    assert checked > 20 and corrected > 0  # the rule was exercised, and it changed what was played


def action_text(reply: str) -> str:
    return reply.split("<ACTION>")[-1].split("</ACTION>")[0].strip()


async def test_the_model_is_never_told_of_the_candidates_it_did_not_play():
    record, seen = await play(plan(1, "reasoning", candidates=4), 0)
    acts = [m for m in seen if isinstance(m, Act)]
    played = {action_text(act.reply) for act in acts}
    unplayed = {action_text(c.reply) for act in acts for c in act.candidates} - played
    assert len(unplayed) > 5
    for turn in (m for m in seen if isinstance(m, YourTurn)):
        shown = " ".join(turn.notices) + repr(turn.view)
        assert not [text for text in unplayed if text in shown]


async def test_verifiers_lift_a_random_mover_and_no_verifier_samples_once():
    wins = {}
    for verifier in ("none", "reasoning"):
        config = plan(30, verifier, candidates=4)
        records = [(await play(config, i))[0] for i in range(30)]
        wins[verifier] = sum(r.outcome == "success" for r in records)
        if verifier == "none":
            assert all(t.candidates is t.chosen for r in records for t in r.turn_log)  # both unset
    assert wins["reasoning"] > wins["none"] + 5, wins
