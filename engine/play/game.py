"""One game: a spec becomes actors on a bus, runs to the end, and becomes a record."""

from __future__ import annotations

import functools
import random
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import anyio
from msgspec import UNSET

from actors.agent import AgentActor
from actors.base import Actor, ActorFailed, run_actors
from actors.environment import Environment
from bus import Bus, Channel, ChannelSpec, Delivery, PolicyChannel, Tap, TapOn
from bus.channel import Spend
from feedback.actor import FeedbackActor
from puzzles import GAMES, Game, GameResult, Policy, Referee, Secrets, get_game, implements

from engine.play.audit import LeakAudit, PhraseAudit
from engine.play.recorded import RecordedGames, replaying
from engine.plan.branching import BranchPoint, OtherPolicy, read_alternative
from engine.policies.branch import branch_policy
from engine.policies.member import member_seat
from engine.policies.seat import HumanAbsent, HumanPolicy
from engine.policies.factory import PolicyFactory, is_model
from engine.records.record import ErrorInfo, GameRecord, cut_replies, usage_totals
from engine.plan.spec import GameSpec


def connect(bus: Bus, roles: tuple[str, ...], topology: str, make_channel: Callable[[str, str], Channel | None]) -> None:
    """Who may talk to whom: everyone to everyone ("all", "directed") or neighbours ("chain")."""
    if topology == "chain":
        pairs = list(zip(roles, roles[1:])) + [(b, a) for a, b in zip(roles, roles[1:])]
    else:
        pairs = [(a, b) for a in roles for b in roles if a != b]
    for sender, recipient in sorted(pairs, key=lambda p: (roles.index(p[0]), roles.index(p[1]))):
        bus.connect(sender, recipient, make_channel(sender, recipient))


def build_game(
    spec: GameSpec, bus: Bus, factory: PolicyFactory, game: Game, recorded: RecordedGames | None = None,
) -> tuple[Environment, list[Actor]]:
    """The actors of one game, wired on ``bus`` as the spec says; with ``recorded``, its model seats
    answered from the recorded game where they make the calls it made (``engine.play.recorded``)."""
    roles = tuple(spec.agents)
    state = game.rules.new(spec.params, spec.seed, roles, spec.max_turns)
    turn_order = spec.option("turn_order", "round_robin")
    topology = spec.option("topology", "all")
    memory = spec.option("memory", "reinject")
    referee = Referee(state, turn_order=turn_order, max_actions=spec.option("max_actions", None))
    environment = Environment(bus, spec.game_id, referee)
    mode = game.rules.feedback[spec.options.feedback]
    actors: list[Actor] = [
        environment,
        FeedbackActor(
            bus, game_id=spec.game_id, max_turns=spec.max_turns, evaluate=functools.partial(mode, state),
        ),
    ]
    branch = spec.option("branch", None)
    replayed = recorded.transcript(spec) if recorded is not None and any(map(is_model, spec.agents.values())) else None
    for role in state.roles:
        policy = factory.make(spec.agents[role], role, spec.policy_seed, game)
        if replayed is not None:
            policy = replaying(policy, replayed, role, spec.member)
        policy = member_seat(policy, spec.member)
        if branch is not None and branch.role == role:
            policy = branch_seat(policy, branch, spec, factory, game)
        actors.append(
            AgentActor(
                bus, role, policy, game_id=spec.game_id, parse=game.faces.prompter.parse, history=spec.options.history,
                directed=topology == "directed", scratchpad=memory == "scratchpad",
            )
        )
    channel_spec = spec.option("channel", None)
    simultaneous = turn_order == "simultaneous"
    spend = {role: Spend() for role in state.roles}  # game budgets are per sender

    def make_channel(sender: str, recipient: str) -> Channel | None:
        if channel_spec is None and not simultaneous:
            return None  # unlimited and faithful
        rng = random.Random(f"{spec.seed}:channel:{sender}:{recipient}")
        # Simultaneous play: what is said in a round is heard in the next.
        return PolicyChannel(channel_spec or ChannelSpec(), rng, spend=spend[sender], hold=simultaneous)

    connect(bus, state.roles, topology, make_channel)
    if spec.option("leak_audit", False):
        if implements(state, Secrets):  # the game names its private phrases
            audit: LeakAudit | PhraseAudit = PhraseAudit({r: tuple(state.secrets(r)) for r in state.roles}, game.faces.prompter.render)
        else:
            audit = LeakAudit({role: state.private(role) for role in state.roles})
        bus.add_tap(audit.tap)
    return environment, actors


def branch_seat(policy: Policy, point: BranchPoint, spec: GameSpec, factory: PolicyFactory, game: Game) -> Policy:
    """The seat's policy with the branch point's turn changed."""
    alternative = read_alternative(point.alternative)
    other = factory.make(alternative.name, point.role, spec.seed, game) if isinstance(alternative, OtherPolicy) else None
    return branch_policy(policy, point, game.faces.prompter, seed=spec.seed, other=other)


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
        actor = cause.role if isinstance(cause, HumanAbsent) and cause.role else failure.address  # whose seat emptied
        return ErrorInfo(
            kind=getattr(cause, "kind", "actor_error"), type=type(cause).__name__, message=str(cause),
            actor=actor, where=_where(cause),
        )
    return ErrorInfo(kind="engine_error", type=type(exc).__name__, message=str(exc), where=_where(exc))


def record_from_result(spec: GameSpec, result: GameResult, channel_log: list[Delivery] | None = None) -> GameRecord:
    roles = list(spec.agents)
    log = result.turn_log
    return GameRecord(
        game_id=spec.game_id,
        spec=spec,
        outcome=result.outcome,  # type: ignore[arg-type]
        turns=result.turns,
        solved_turn=result.solved_turn,
        scores=result.scores,
        metrics=result.metrics,
        format_errors={r: sum(t.format_error is not None and t.cut is UNSET for t in log if t.role == r) for r in roles},
        cut_replies=cut_replies(log, roles),
        invalid_actions={r: sum(len(t.rejected) for t in log if t.role == r) for r in roles},
        message_chars={r: [t.message_chars for t in log if t.role == r] for r in roles},
        turn_log=log,
        channel_log=UNSET if channel_log is None else channel_log,
        usage=usage_totals(log),
    )


_DELIVERIES = frozenset((Delivery,))


async def play_game(
    spec: GameSpec, factory: PolicyFactory, taps: Iterable[Tap | TapOn] = (), *, games: Mapping[str, Game] = GAMES,
    preparing: anyio.CapacityLimiter | None = None, recorded: RecordedGames | None = None,
) -> GameRecord:
    """Run one game to its record. Any exception inside the game becomes the record's error.
    ``games`` is where the spec's game is looked up (the registry unless a test brings its own);
    ``recorded``: the run whose recorded replies the model seats replay (``build_game``).
    The game's ``prepare`` runs in a worker thread of ``preparing`` (a run shares one limiter of one
    thread: more threads would take the interpreter lock from the event loop more often without
    finishing sooner)."""
    # The game's actors are awaited right here, not through a helper coroutine: each frame in the
    # chain is held by every game in flight.
    actors: list[Actor] = []
    channel_log: list[Delivery] | None = None
    environment: Environment | None = None
    try:
        bus = Bus()
        for tap in taps:
            bus.add_tap(tap)
        if spec.options.channel is not UNSET or spec.options.turn_order is not UNSET:
            channel_log = []
            log = channel_log
            bus.add_tap(TapOn(lambda address, delivery: log.append(delivery), _DELIVERIES))
        game = get_game(spec.game, games)
        if game.rules.prepare is not None:  # slow set-up (planning, say) off the event loop
            preparing = preparing or anyio.CapacityLimiter(1)
            await anyio.to_thread.run_sync(game.rules.prepare, spec.params, spec.seed, limiter=preparing)
        environment, built = build_game(spec, bus, factory, game, recorded)
        actors.extend(built)
        await run_actors(actors)
    except Exception as exc:  # one game's failure never ends the run
        record = GameRecord(game_id=spec.game_id, spec=spec, outcome="error", error=error_info(exc))
        if environment is not None:  # keep what was played before the error
            partial = record_from_result(spec, environment.partial_result(), channel_log)
            partial.outcome, partial.error, partial.solved_turn = "error", record.error, None
            record = partial
    else:
        if environment.result is None:
            error = ErrorInfo(kind="engine_error", type="GameEndedEarly", message="the game ended without a result")
            record = GameRecord(game_id=spec.game_id, spec=spec, outcome="error", error=error)
        else:
            record = record_from_result(spec, environment.result, channel_log)
    seats = {a.role: a.policy.record for a in actors if isinstance(a, AgentActor) and isinstance(a.policy, HumanPolicy)}
    if seats:
        record.humans = seats
    if any(is_model(name) for name in spec.agents.values()):
        record.sampling = factory.hub.settings.options.sampling()
    return record
