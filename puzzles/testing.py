"""The conformance check every game passes: ``check_game(game)`` raises AssertionError naming the
first broken promise of the contract in ``puzzles.base``.

It plays the game with its own scripted strategies through the referee, synchronously (scripted
policies never wait on anything, so their coroutines run to the end at once), and checks:
- the parameters: the defaults pass ``check()``, have labels, and carry the game's name as tag;
- determinism: the same seed gives the same views and, with scripted agents, the same replies;
- privacy: at the start no role's view holds an item private to another role;
- rejected actions (``Rules.invalid_examples``) leave the whole state unchanged and say why;
- every scripted strategy plays every roster to the end, and the default one succeeds;
- the prompt renders, every scripted reply parses, a parsed reply written in the game's format reads
  back the same, and a prompt the game can read back shows the context it was rendered from.

``check_seat(game)`` (``puzzles.seat_check``) does the same for the seat a person plays.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

import msgspec

from .base import Game
from .turn import ChatLine, Reply, ReplyFormatError, TurnContext
from .referee import Referee, Turn


def run_now(coroutine: Any) -> Any:
    """The result of a coroutine that never suspends (a scripted policy's reply)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise AssertionError("a scripted policy waited on something; scripted policies must answer at once")


def _snapshot(state: Any) -> bytes:
    return msgspec.json.encode(
        [[state.view(r) for r in state.roles], [state.progress(r) for r in state.roles], state.scores(), state.metrics(), state.done()]
    )


def _items(value: Any) -> set[bytes]:
    """Every sub-value of ``value``, encoded (what could show up of it somewhere else)."""
    out: set[bytes] = set()
    stack = [msgspec.to_builtins(value)]
    while stack:
        item = stack.pop()
        out.add(msgspec.json.encode(item))
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return out


def _private_items(value: Any) -> set[bytes]:
    """The items of a role's private information: the elements of its top-level lists."""
    data = msgspec.to_builtins(value)
    items = data if isinstance(data, list) else list(data.values()) if isinstance(data, dict) else [data]
    return {msgspec.json.encode(i) for i in items if isinstance(i, (list, dict)) or i is not None}


class PlayedGame(msgspec.Struct):
    outcome: str
    turns: int
    replies: list[str]


def play_scripted(game: Game, params: Any, seed: int, roles: tuple[str, ...], strategies: dict[str, str]) -> PlayedGame:
    """One game with scripted policies, every message heard by every partner, the game's default
    feedback. Checks each reply's round trip through the game's format on the way."""
    state = game.rules.new(params, seed, roles, game.rules.default_max_turns(params, roles))
    referee = Referee(state)
    policies = {r: game.rules.scripted[strategies[r]](r, random.Random(f"{seed}:{r}")) for r in roles}
    heard: dict[str, list[ChatLine]] = {r: [] for r in roles}
    feedback = game.rules.feedback[game.rules.default_feedback]
    replies: list[str] = []
    ask = list(referee.start())
    while ask:
        role = ask.pop(0)
        context = TurnContext(
            game_id=0, role=role, turn=referee.turn, max_turns=state.max_turns, view=state.view(role),
            feedback=feedback(state, role), conversation=tuple(heard[role]), notices=referee.notices(role),
            partners=tuple(r for r in roles if r != role),
        )
        system, user = game.faces.prompter.render(context)
        assert system.strip() and user.strip(), f"{game.name}: an empty prompt for {role}"
        text = run_now(policies[role].reply(context)).text
        replies.append(text)
        try:
            reply = game.faces.prompter.parse(text, context)
        except ReplyFormatError as exc:
            raise AssertionError(f"{game.name}: a {strategies[role]} reply cannot be read: {exc}\n{text}") from None
        again = game.faces.prompter.parse(game.faces.prompter.format(reply, "prose"), context)
        assert again == reply, f"{game.name}: a reply written in the game's format reads back differently: {reply} vs {again}"
        if reply.message:
            for partner in context.partners:
                heard[partner].append(ChatLine(referee.turn, role, reply.message))
            heard[role].append(ChatLine(referee.turn, role, reply.message))
        turn = referee.turn
        following = referee.play(Turn(turn=turn, role=role, message=reply.message, actions=reply.actions, rejected=reply.rejected))
        for said in following.say:
            for partner in ((said.to,) if said.to else context.partners):
                heard[partner].append(ChatLine(turn, role, said.text))
        if following.over:
            break
        ask.extend(following.ask)
    result = referee.result()
    return PlayedGame(result.outcome, result.turns, replies)


def check_game(game: Game, params: Any = None, seeds: Iterable[int] = range(4)) -> None:
    """Raise AssertionError if ``game`` breaks the contract (with ``params``, default the defaults)."""
    params = params if params is not None else game.rules.Params()
    params.check()
    labels = params.labels()
    assert labels and all(isinstance(v, str) for v in labels.values()), f"{game.name}: labels must be strings"
    encoded = msgspec.json.decode(msgspec.json.encode(params))
    assert encoded.get("game") == game.name, f"{game.name}: Params must be tagged game={game.name!r}"
    assert game.rules.default_feedback in game.rules.feedback, f"{game.name}: the default feedback is not one of its modes"
    assert game.rules.scripted, f"{game.name}: no scripted strategy"
    seeds = list(seeds)
    for roles in game.rules.rosters:
        turns = game.rules.default_max_turns(params, roles)
        for seed in seeds:
            state, twin = game.rules.new(params, seed, roles, turns), game.rules.new(params, seed, roles, turns)
            assert tuple(state.roles) == tuple(roles), f"{game.name}: roles {state.roles} for roster {roles}"
            assert _snapshot(state) == _snapshot(twin), f"{game.name}: seed {seed} gave two different games"
            assert not state.done(), f"{game.name}: a game must not be over before it starts"
            for role in roles:
                shown = _items(state.view(role))
                mine = _private_items(state.private(role))
                for other in roles:
                    if other == role:
                        continue
                    leaked = (_private_items(state.private(other)) - mine) & shown
                    assert not leaked, f"{game.name}: {role}'s view shows {other}'s private {sorted(leaked)[:2]}"
                _check_rejections(game, state, role)
        for strategy in game.rules.scripted:
            for seed in seeds:
                strategies = dict.fromkeys(roles, strategy)
                first = play_scripted(game, params, seed, roles, strategies)
                assert first == play_scripted(game, params, seed, roles, strategies), (
                    f"{game.name}: {strategy} played seed {seed} twice differently"
                )
                assert first.outcome in ("success", "failure"), f"{game.name}: {strategy} ended with {first.outcome}"
                if strategy == game.default_policy:
                    assert first.outcome == "success", f"{game.name}: {strategy} did not succeed on seed {seed}"
        _check_read_back(game, params, roles, seeds[0])


def _check_rejections(game: Game, state: Any, role: str) -> None:
    invalid = game.rules.invalid_examples
    examples = tuple(invalid(state, role)) if invalid is not None else ()
    for action in examples:
        before = _snapshot(state)
        step = state.step(role, (action,))
        assert step.applied == 0 and len(step.rejected) == 1, f"{game.name}: {action} was not rejected"
        assert step.rejected[0].reason.strip(), f"{game.name}: {action} was rejected without a reason"
        assert _snapshot(state) == before, f"{game.name}: the rejected {action} changed the state"


def _check_read_back(game: Game, params: Any, roles: tuple[str, ...], seed: int) -> None:
    """A prompt read back shows the context it was rendered from, as far as the prompt shows it: a
    turn number of 0 means the prompt shows none (nor the turns of the conversation's lines); a game
    whose agents keep their whole chat shows only what is new since the agent's last turn, so its
    conversation is checked by the game's own tests."""
    state = game.rules.new(params, seed, roles, game.rules.default_max_turns(params, roles))
    chat = game.faces.prompter.chat_memory
    for role in roles:
        context = TurnContext(
            game_id=0, role=role, turn=1, max_turns=state.max_turns, view=state.view(role),
            feedback=game.rules.feedback[game.rules.default_feedback](state, role), conversation=(ChatLine(1, role, "hello"),),
            partners=tuple(r for r in roles if r != role),
        )
        rendered = game.faces.prompter.render(context)
        read = game.faces.prompter.read(*rendered)
        if read is None:
            continue
        shown, _ = read
        if context.partners:
            directed = msgspec.structs.replace(context, directed=True)
            rendered_directed = game.faces.prompter.render(directed)
            if rendered_directed != rendered:  # a prompt that shows no direction cannot read back as directed
                again = game.faces.prompter.read(*rendered_directed)
                assert again is not None and again[0].directed, f"{game.name}: a directed prompt reads back undirected"
        assert shown.role == role, f"{game.name}: the prompt of {role} read back as {shown.role}"
        if shown.turn != 0:
            assert (shown.turn, shown.max_turns) == (1, state.max_turns), f"{game.name}: prompt read back as turn {shown.turn} of {shown.max_turns}"
        view = context.view  # less the rules a view holds that its prompt does not show (``unprompted``)
        unprompted = getattr(type(view), "unprompted", ())
        if unprompted:
            view = msgspec.structs.replace(view, **{name: getattr(shown.view, name) for name in unprompted})
        assert shown.view == view, f"{game.name}: the prompt of {role} reads back another view"
        assert shown.partners == context.partners, f"{game.name}: the prompt of {role} reads back other partners"
        if context.partners and not chat:  # with nobody to talk to, a prompt shows no conversation
            expected = context.conversation
            if shown.turn == 0:
                expected = tuple(msgspec.structs.replace(line, turn=0) for line in expected)
            assert shown.conversation == expected, f"{game.name}: the conversation reads back differently"


from .seat_check import check_seat  # noqa: E402 - one import for both checks

__all__ = ["PlayedGame", "Reply", "check_game", "check_seat", "play_scripted", "run_now"]
