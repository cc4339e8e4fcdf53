"""One game: a spec becomes actors on a bus, runs to the end, and becomes a record."""

from __future__ import annotations

import traceback
from pathlib import Path
from collections.abc import Iterable

import anyio

from actors.agent import AgentActor
from actors.base import Actor, ActorFailed
from actors.environment import Environment, GameResult
from bus import Bus, Tap
from feedback.actor import FeedbackActor
from feedback.modes import feedback_mode
from puzzles.asympuzl import ROLES, SOLO, AsymPuzlGame, generate
from puzzles.replies import ReplyFormatError, parse_reply

from .policies import PolicyFactory
from .records import ErrorInfo, GameRecord
from .spec import GameSpec


def build_asympuzl(
    spec: GameSpec, bus: Bus, factory: PolicyFactory, roles: tuple[str, ...] = ROLES
) -> tuple[Environment, list[Actor]]:
    """The actors of one AsymPuzl game, wired on ``bus``: everyone may talk to everyone."""
    puzzle = generate(spec.size, spec.seed, spec.distractors, spec.distractors_in)
    game = AsymPuzlGame(puzzle, spec.max_turns, roles)
    environment = Environment(bus, spec.game_id, game)
    mode = feedback_mode(spec.feedback)
    truth = puzzle.truth
    actors: list[Actor] = [
        environment,
        FeedbackActor(
            bus, game_id=spec.game_id, max_turns=spec.max_turns,
            evaluate=lambda hypotheses, role: mode(truth, hypotheses, role),
        ),
    ]
    for role in game.roles:
        policy = factory.make(spec.agents[role], role, spec.seed)
        actors.append(
            AgentActor(
                bus, role, policy, game_id=spec.game_id, clues=game.clues(role), size=puzzle.size,
                parse=parse_reply, format_error=ReplyFormatError, history=spec.history,
            )
        )
        for other in game.roles:
            if other != role:
                bus.connect(role, other)
    return environment, actors


def build_asympuzl_solo(spec: GameSpec, bus: Bus, factory: PolicyFactory) -> tuple[Environment, list[Actor]]:
    """The single-agent check: one agent holds both views and no one to talk to."""
    return build_asympuzl(spec, bus, factory, roles=(SOLO,))


BUILDERS = {"asympuzl": build_asympuzl, "asympuzl_solo": build_asympuzl_solo}


def _find_actor_failure(exc: BaseException) -> ActorFailed | None:
    if isinstance(exc, ActorFailed):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find_actor_failure(inner)
            if found is not None:
                return found
    return None


def _where(exc: BaseException) -> str | None:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    last = frames[-1]
    return f"{Path(last.filename).name}:{last.lineno} in {last.name}"  # no absolute paths in records


def error_info(exc: BaseException) -> ErrorInfo:
    failure = _find_actor_failure(exc)
    if failure is not None:
        cause = failure.cause
        return ErrorInfo(
            kind="actor_error", type=type(cause).__name__, message=str(cause),
            actor=failure.address, where=_where(cause),
        )
    return ErrorInfo(kind="engine_error", type=type(exc).__name__, message=str(exc), where=_where(exc))


def record_from_result(spec: GameSpec, result: GameResult) -> GameRecord:
    roles = list(spec.agents)
    log = result.turn_log
    metrics = result.metrics
    return GameRecord(
        game_id=spec.game_id,
        spec=spec,
        outcome=result.outcome,  # type: ignore[arg-type]
        turns=result.turns,
        solved_turn=result.solved_turn,
        actions_per_position=metrics.get("actions_per_position", {}),
        position_actions=metrics.get("position_actions", {}),
        correct_positions=metrics.get("correct_positions", {}),
        format_errors={r: sum(t.format_error is not None for t in log if t.role == r) for r in roles},
        invalid_actions={r: sum(len(t.rejected) for t in log if t.role == r) for r in roles},
        message_chars={r: [t.message_chars for t in log if t.role == r] for r in roles},
        turn_log=log,
    )


async def play_game(spec: GameSpec, factory: PolicyFactory, taps: Iterable[Tap] = ()) -> GameRecord:
    """Run one game to its record. Any exception inside the game becomes the record's error."""
    try:
        bus = Bus()
        for tap in taps:
            bus.add_tap(tap)
        environment, actors = BUILDERS[spec.puzzle](spec, bus, factory)
        async with anyio.create_task_group() as tg:
            for actor in actors:
                tg.start_soon(actor.run, name=f"game {spec.game_id} {actor.address}")
    except Exception as exc:  # one game's failure never ends the run
        return GameRecord(game_id=spec.game_id, spec=spec, outcome="error", error=error_info(exc))
    if environment.result is None:
        error = ErrorInfo(kind="engine_error", type="GameEndedEarly", message="the game ended without a result")
        return GameRecord(game_id=spec.game_id, spec=spec, outcome="error", error=error)
    return record_from_result(spec, environment.result)
