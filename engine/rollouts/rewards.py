"""A played game's rewards, per seat and per turn, as its game names them (``puzzles.base.Rewards``):
the engine reads the record and asks the game, and knows no game's figures itself.

- per seat, when the game ended: the game's named rewards (``Rewards.seat``) from the record's
  outcome, scores and metrics;
- per turn: the change of the seat's progress (``GameState.progress``, as the turn log records it
  after each turn), over the game's ``progress_scale``, since the seat's previous turn; before its
  first turn, the progress the game starts with (the game is built again from its seed to read it).
"""

from __future__ import annotations

from puzzles import Ending, Game, Rewards

from engine.records import GameRecord


class NoRewards(ValueError):
    """The game names no rewards for training."""


def rewards_of(game: Game) -> Rewards:
    if game.records.rewards is None:
        raise NoRewards(f"{game.name} names no rewards for training (Records.rewards)")
    return game.records.rewards


def seat_rewards(record: GameRecord, game: Game) -> dict[str, dict[str, float]]:
    """Per seat, the game's named rewards at the end; empty for a game that ended in an error."""
    if record.outcome == "error":
        return {}
    rewards = rewards_of(game)
    ending = Ending(record.spec.params, record.outcome == "success", record.scores, record.metrics)
    return {role: rewards.seat(ending, role) for role in record.spec.agents}


def turn_rewards(record: GameRecord, game: Game) -> dict[tuple[int, str], tuple[float, float]]:
    """(turn, seat) -> (the turn's reward, the seat's progress after it), both as shares of the
    game's progress scale, for every turn in the record's turn log."""
    spec = record.spec
    scale = rewards_of(game).progress_scale(spec.params)
    state = game.rules.new(spec.params, spec.seed, tuple(spec.agents), spec.max_turns)
    last = {role: float(state.progress(role)) for role in spec.agents}
    out: dict[tuple[int, str], tuple[float, float]] = {}
    for log in record.turn_log:
        now = float(log.progress)
        out[log.turn, log.role] = ((now - last[log.role]) / scale, now / scale)
        last[log.role] = now
    return out
