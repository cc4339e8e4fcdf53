"""The conformance check of the seat a person plays (``puzzles.seat``): ``check_seat(game)`` raises
AssertionError naming the first broken promise: what the seat shows and its forms have the right
types, nothing private to another role is shown, a filled-in form becomes an action the game's reply
format carries, a value that is not a choice is refused, and no choice list tells the hidden solution.
``check_offers_taken(game, params)`` checks, for rules that refuse what they do not take, that no
choice on offer is refused.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterable
from typing import Any

import msgspec

from .base import Game, Secrets
from .optional import implements
from .turn import Reply, ReplyFormatError, TurnContext
from .seat import ActionForm, Field, Section, seat_of

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
    params = params if params is not None else game.rules.Params()
    seat = seat_of(game)
    feedback = game.rules.feedback[game.rules.default_feedback]
    seeds = list(seeds)
    for roles in game.rules.rosters:
        turns = game.rules.default_max_turns(params, roles)
        choices: dict[str, list[tuple[dict, str]]] = {role: [] for role in roles}
        for seed in seeds:
            state = game.rules.new(params, seed, roles, turns)
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
                    _check_form(game, seat, context, form, lambda: game.rules.new(params, seed, roles, turns), where)
                lists = {(f.kind, x.name): x.choices for f in forms for x in f.fields if x.choices}
                choices[role].append((lists, f"{rules}\n{shown}".lower()))
        for role, seen in choices.items():
            _check_choices_follow_the_view(seen, f"{game.name} seat of {role}")


def check_offers_taken(game: Game, params: Any = None, seeds: Iterable[int] = (0, 1, 2), steps: int = 40) -> None:
    """Raise AssertionError if a choice the seat of ``game`` offers becomes an action the game refuses
    (``Step.rejected``): through whole games (the roles in turn, each playing one of its offers at
    random), every choice of every form with choices, the form's other fields at their first value,
    is tried on a copy of the state. For games whose rules refuse what they do not take (no guesses);
    a form without choices (a pass) is not tried."""
    params = params if params is not None else game.rules.Params()
    seat = seat_of(game)
    feedback = game.rules.feedback[game.rules.default_feedback]
    for roles in game.rules.rosters:
        turns = game.rules.default_max_turns(params, roles)
        for seed in seeds:
            rng = random.Random(seed)
            state = game.rules.new(params, seed, roles, turns)
            for number in range(steps):
                if state.done():
                    break
                role = roles[number % len(roles)]
                context = TurnContext(
                    game_id=0, role=role, turn=number // len(roles) + 1, max_turns=turns, view=state.view(role),
                    feedback=feedback(state, role), conversation=(), partners=tuple(r for r in roles if r != role),
                )
                where = f"{game.name} seat of {role} (seed {seed}, step {number + 1})"
                offers = []
                for form in seat.forms(context):
                    base = {field.name: _filled(field) for field in form.fields}
                    for field in form.fields:
                        for choice in field.choices if field.kind == "choice" else ():
                            values = {**base, field.name: choice}
                            action = seat.action(context, form.kind, values)
                            step = copy.deepcopy(state).step(role, (action,))
                            assert not step.rejected, f"{where}: {form.kind} {values} is offered but refused: {step.rejected[0].reason}"
                            offers.append(action)
                state.step(role, (rng.choice(offers),) if offers else ())


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
        text = game.faces.prompter.format(Reply("", (action,)))
        try:
            read = game.faces.prompter.parse(text, context).actions
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


# What another role knows privately, in what a seat shows (a small version of ``engine.play.audit``): the
# game's secret phrases where it names them; otherwise the entries of a role's private information
# (``msgspec.to_builtins`` of ``GameState.private``), each entry the words that stand together in it,
# looked for in each clause of the text. ``engine.play.audit`` pairs words up; a whole entry is looked for
# here, because a seat drawn for a person writes many small words together (room letters beside coin
# counts) and a pair of them turns up by chance. An entry of one word says where it stands in its
# list, so it goes with its number ("square" at 1).


def _leak_check(state: Any, roles: tuple[str, ...]) -> Any:
    named = implements(state, Secrets)
    if named:
        phrases = {role: set(state.secrets(role)) for role in roles}
    else:
        entries = {role: _entries(msgspec.to_builtins(state.private(role))) for role in roles}
        known = {role: _entries(msgspec.to_builtins(state.private(role)), numbered=True) for role in roles}

    def check(role: str, shown: str, where: str) -> None:
        if named:
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
