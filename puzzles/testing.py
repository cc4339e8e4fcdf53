"""The conformance check every game passes: ``check_game(game)`` raises AssertionError naming the
first broken promise of the contract in ``puzzles.base``.

It plays the game with its own scripted strategies through the referee, synchronously (scripted
policies never wait on anything, so their coroutines run to the end at once), and checks:
- the parameters: the defaults pass ``check()``, have labels, and carry the game's name as tag;
- determinism: the same seed gives the same views and, with scripted agents, the same replies;
- privacy: at the start no role's view holds an item private to another role;
- rejected actions (``Game.invalid_examples``) leave the whole state unchanged and say why;
- every scripted strategy plays every roster to the end, and the default one succeeds;
- the prompt renders, every scripted reply parses, a parsed reply written in the game's format reads
  back the same, and a prompt the game can read back shows the context it was rendered from.

``check_seat(game)`` does the same for the seat a person plays (``puzzles.seat``): what it shows,
its forms, and that a filled-in form becomes an action the game's reply format carries.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import Any

import msgspec

from .base import ChatLine, Game, Reply, ReplyFormatError, TurnContext
from .referee import Referee, Turn
from .seat import ActionForm, Field, Section, seat_of


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
    state = game.new(params, seed, roles, game.default_max_turns(params, roles))
    referee = Referee(state)
    policies = {r: game.scripted[strategies[r]](r, random.Random(f"{seed}:{r}")) for r in roles}
    heard: dict[str, list[ChatLine]] = {r: [] for r in roles}
    feedback = game.feedback[game.default_feedback]
    replies: list[str] = []
    ask = list(referee.start())
    while ask:
        role = ask.pop(0)
        context = TurnContext(
            game_id=0, role=role, turn=referee.turn, max_turns=state.max_turns, view=state.view(role),
            feedback=feedback(state, role), conversation=tuple(heard[role]), notices=referee.notices(role),
            partners=tuple(r for r in roles if r != role),
        )
        system, user = game.prompter.render(context)
        assert system.strip() and user.strip(), f"{game.name}: an empty prompt for {role}"
        text = run_now(policies[role].reply(context))
        replies.append(text)
        try:
            reply = game.prompter.parse(text, context)
        except ReplyFormatError as exc:
            raise AssertionError(f"{game.name}: a {strategies[role]} reply cannot be read: {exc}\n{text}") from None
        again = game.prompter.parse(game.prompter.format(reply, "prose"), context)
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
    params = params if params is not None else game.Params()
    params.check()
    labels = params.labels()
    assert labels and all(isinstance(v, str) for v in labels.values()), f"{game.name}: labels must be strings"
    encoded = msgspec.json.decode(msgspec.json.encode(params))
    assert encoded.get("game") == game.name, f"{game.name}: Params must be tagged game={game.name!r}"
    assert game.default_feedback in game.feedback, f"{game.name}: the default feedback is not one of its modes"
    assert game.scripted, f"{game.name}: no scripted strategy"
    seeds = list(seeds)
    for roles in game.rosters:
        turns = game.default_max_turns(params, roles)
        for seed in seeds:
            state, twin = game.new(params, seed, roles, turns), game.new(params, seed, roles, turns)
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
        for strategy in game.scripted:
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
    examples = tuple(game.invalid_examples(state, role)) if game.invalid_examples else ()
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
    state = game.new(params, seed, roles, game.default_max_turns(params, roles))
    chat = getattr(game.prompter, "chat_memory", False)
    for role in roles:
        context = TurnContext(
            game_id=0, role=role, turn=1, max_turns=state.max_turns, view=state.view(role),
            feedback=game.feedback[game.default_feedback](state, role), conversation=(ChatLine(1, role, "hello"),),
            partners=tuple(r for r in roles if r != role),
        )
        rendered = game.prompter.render(context)
        read = game.prompter.read(*rendered)
        if read is None:
            continue
        shown, _ = read
        if context.partners:
            directed = msgspec.structs.replace(context, directed=True)
            rendered_directed = game.prompter.render(directed)
            if rendered_directed != rendered:  # a prompt that shows no direction cannot read back as directed
                again = game.prompter.read(*rendered_directed)
                assert again is not None and again[0].directed, f"{game.name}: a directed prompt reads back undirected"
        assert shown.role == role, f"{game.name}: the prompt of {role} read back as {shown.role}"
        if shown.turn != 0:
            assert (shown.turn, shown.max_turns) == (1, state.max_turns), f"{game.name}: prompt read back as turn {shown.turn} of {shown.max_turns}"
        assert shown.view == context.view, f"{game.name}: the prompt of {role} reads back another view"
        assert shown.partners == context.partners, f"{game.name}: the prompt of {role} reads back other partners"
        if context.partners and not chat:  # with nobody to talk to, a prompt shows no conversation
            expected = context.conversation
            if shown.turn == 0:
                expected = tuple(msgspec.structs.replace(line, turn=0) for line in expected)
            assert shown.conversation == expected, f"{game.name}: the conversation reads back differently"


# ---- The seat a person plays ----

_WORD = re.compile(r"[a-z0-9]+")
_CLAUSE = re.compile(r"[\n;.!?\[\]{}]")  # brackets too: an entry of a list written as JSON is a unit
NOT_A_CHOICE = "\x00not one of the choices"


def check_seat(game: Game, params: Any = None, seeds: Iterable[int] = (0, 1, 2)) -> None:
    """Raise AssertionError if the seat of ``game`` (its own, or the stand-in) breaks the contract in
    ``puzzles.seat``: at the start of every roster and seed, for every role, the rules, sections and
    forms have the right types and make sense; nothing private to another role is shown; a filled-in
    form becomes an action the game's reply format carries (or at least one the game can step); a
    value that is not a choice is refused with ValueError; and a choice list that changes with the
    seed holds only what the role is shown (so that no form tells the hidden solution)."""
    params = params if params is not None else game.Params()
    seat = seat_of(game)
    feedback = game.feedback[game.default_feedback]
    seeds = list(seeds)
    for roles in game.rosters:
        turns = game.default_max_turns(params, roles)
        choices: dict[str, list[tuple[dict, str]]] = {role: [] for role in roles}
        for seed in seeds:
            state = game.new(params, seed, roles, turns)
            leaks = _leak_check(state, roles)
            for role in roles:
                context = TurnContext(
                    game_id=0, role=role, turn=1, max_turns=turns, view=state.view(role),
                    feedback=feedback(state, role), conversation=(), partners=tuple(r for r in roles if r != role),
                )
                where = f"{game.name} seat of {role} (seed {seed})"
                rules, sections, forms = seat.rules(context), tuple(seat.show(context)), tuple(seat.forms(context))
                assert isinstance(rules, str) and rules.strip(), f"{where}: rules must be text"
                _check_sections(sections, where)
                _check_forms(forms, where)
                assert forms == tuple(seat.forms(context)), f"{where}: the forms of one context differ from call to call"
                shown = "\n".join([*_texts_of(sections), *(f"{f.label} {f.help}" for f in forms)])
                leaks(role, shown, where)  # the rules are not looked at: a prompt's rules show an example game
                for form in forms:
                    _check_form(game, seat, context, form, lambda: game.new(params, seed, roles, turns), where)
                lists = {(f.kind, x.name): x.choices for f in forms for x in f.fields if x.choices}
                choices[role].append((lists, f"{rules}\n{shown}".lower()))
        for role, seen in choices.items():
            _check_choices_follow_the_view(seen, f"{game.name} seat of {role}")


def _check_sections(sections: tuple[Section, ...], where: str) -> None:
    assert all(isinstance(s, Section) and s.title.strip() for s in sections), f"{where}: show() must give titled Sections"
    for section in sections:
        assert all(isinstance(line, str) for line in section.lines), f"{where}: a line of {section.title!r} is not text"
        if section.board is not None:
            width = len(section.board.columns)
            assert all(len(row) == width for row in section.board.rows), f"{where}: a row of {section.title!r} is not {width} cells wide"
    msgspec.json.encode(sections)  # a page gets them as JSON


def _check_forms(forms: tuple[ActionForm, ...], where: str) -> None:
    assert all(isinstance(f, ActionForm) for f in forms), f"{where}: forms() must give ActionForms"
    kinds = [f.kind for f in forms]
    assert len(set(kinds)) == len(kinds), f"{where}: two forms of one kind: {kinds}"
    for form in forms:
        for field in form.fields:
            assert isinstance(field, Field), f"{where}: {form.kind} has a field that is not a Field"
            if field.kind in ("choice", "sequence"):
                assert field.choices, f"{where}: {form.kind}.{field.name} has no choices"
                assert len(set(field.choices)) == len(field.choices), f"{where}: {form.kind}.{field.name} names a choice twice"
            if field.minimum is not None and field.maximum is not None:
                assert field.minimum <= field.maximum, f"{where}: {form.kind}.{field.name} runs from {field.minimum} to {field.maximum}"
    msgspec.json.encode(forms)


def _filled(field: Field) -> Any:
    """The plainest valid value of a field: the first choice, the least number, some text, the
    shortest sequence."""
    if field.kind == "choice":
        return field.choices[0]
    if field.kind == "number":
        return field.minimum if field.minimum is not None else field.maximum if field.maximum is not None else 1
    if field.kind == "sequence":
        length = max(field.minimum or 1, 1)
        items = field.choices * length if field.repeats else field.choices
        return list(items[:length])
    return "x"


def _check_form(game: Game, seat: Any, context: TurnContext, form: ActionForm, fresh: Any, where: str) -> None:
    values = {field.name: _filled(field) for field in form.fields}
    try:
        action = seat.action(context, form.kind, values)
    except ValueError as exc:
        # Free text may be wrong whatever is typed (JSON, a name); any other form filled in must work.
        assert any(f.kind == "text" for f in form.fields), f"{where}: {form.kind} filled in {values} was refused: {exc}"
        action = None
    if action is not None:
        described = seat.describe(action)
        assert isinstance(described, str) and described.strip() and "\n" not in described, f"{where}: describe gave {described!r}"
        text = game.prompter.format(Reply("", (action,)))
        try:
            read = game.prompter.parse(text, context).actions
        except ReplyFormatError:
            read = ()
        if read != (action,):  # the reply format cannot carry it: the game must at least take it
            fresh().step(context.role, (action,))
    for field in form.fields:
        wrong = NOT_A_CHOICE if field.kind in ("choice", "sequence") else field.maximum + 1 if field.kind == "number" and field.maximum is not None else None
        if wrong is None:
            continue
        try:
            seat.action(context, form.kind, {**values, field.name: [wrong] if field.kind == "sequence" else wrong})
        except ValueError:
            continue
        raise AssertionError(f"{where}: {form.kind} took {wrong!r} for {field.name}")


def _check_choices_follow_the_view(seen: list[tuple[dict, str]], where: str) -> None:
    """A choice list that is not the same for every seed (of the same parameters) may only offer
    what the role is shown: a list drawn from the hidden solution would tell it."""
    for key in {k for lists, _ in seen for k in lists}:
        if len({lists.get(key) for lists, _ in seen}) < 2:
            continue
        for lists, shown in seen:
            hidden = [c for c in lists.get(key, ()) if c.lower() not in shown]
            assert not hidden, f"{where}: {key[0]}.{key[1]} changes with the seed and offers {hidden[:3]}, which the seat is not shown"


# What another role knows privately, in what a seat shows (a small version of ``engine.audit``): the
# game's secret phrases where it names them; otherwise the entries of a role's private information
# (``msgspec.to_builtins`` of ``GameState.private``), each entry the words that stand together in it,
# looked for in each clause of the text. ``engine.audit`` pairs words up; a whole entry is looked for
# here, because a seat drawn for a person writes many small words together (room letters beside coin
# counts) and a pair of them turns up by chance. An entry of one word says where it stands in its
# list, so it goes with its number ("square" at 1).


def _leak_check(state: Any, roles: tuple[str, ...]) -> Any:
    secrets = getattr(state, "secrets", None)
    if secrets is not None:
        phrases = {role: set(secrets(role)) for role in roles}
    else:
        entries = {role: _entries(msgspec.to_builtins(state.private(role))) for role in roles}
        known = {role: _entries(msgspec.to_builtins(state.private(role)), numbered=True) for role in roles}

    def check(role: str, shown: str, where: str) -> None:
        if secrets is not None:
            others = set().union(*(phrases[r] for r in roles if r != role)) - phrases[role]
            leaked = sorted(p for p in others if p in shown)
        else:
            others = {e for r in roles if r != role for e in entries[r] if not any(e <= m for m in known[role])}
            units = _clauses(shown)
            leaked = sorted(" ".join(sorted(e)) for e in others if any(e <= unit for unit in units))
        assert not leaked, f"{where}: shows what another role knows privately: {leaked[:3]}"

    return check


def _clauses(text: str) -> list[set[str]]:
    return [set(_WORD.findall(part)) for part in _CLAUSE.split(text.lower())]


def _entries(value: Any, numbered: bool = False) -> list[frozenset]:
    """The entries of private information: each a list (or dict) of single words, found at any depth;
    ``numbered``: every entry of a list with its number (what a role knows of its own entries)."""
    out: list[frozenset] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)) and item and all(_is_entry(x) for x in item):
            for number, entry in enumerate(item, start=1):
                words = _words(entry)
                out.append(frozenset(words | {str(number)} if numbered or len(words) == 1 else words))
        elif _is_entry(item):
            out.append(frozenset(_words(item)))
        elif isinstance(item, (list, tuple, dict)):
            stack.extend(item.values() if isinstance(item, dict) else item)
    return [entry for entry in out if len(entry) >= 2]


def _is_entry(item: Any) -> bool:
    if not isinstance(item, (list, tuple, dict)):
        return False
    values = item.values() if isinstance(item, dict) else item
    return all(isinstance(v, (str, int, type(None))) and not (isinstance(v, str) and " " in v) for v in values)


def _words(item: Any) -> set[str]:
    values = item.values() if isinstance(item, dict) else item
    return {str(v).lower() for v in values if v is not None and not isinstance(v, bool)}


def _texts_of(sections: tuple[Section, ...]) -> list[str]:
    """A seat's sections as lines of text: each line, and each table row (its cells in a line)."""
    texts = []
    for section in sections:
        texts.append(section.title)
        texts.extend(section.lines)
        if section.board is not None:
            texts.extend(" ".join(span.text for span in row) for row in section.board.rows)
    return texts


__all__ = ["PlayedGame", "Reply", "check_game", "check_seat", "play_scripted", "run_now"]
