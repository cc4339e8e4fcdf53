"""The Einstein tabletop game for a person in a seat (``puzzles.seat``): the goal in plain words, the
table as a list of bins and their blocks, the person's constraints and the history as lines, and a
form per action the player's action mode allows.

The game has no free messages (players speak through share and ask) and one action per step, so
the seat says ``messages = False`` and ``max_actions = 1``; a person who lets the time run out
passes. The forms offer what a person at the real table could do: move a block within reach (its
bin is where the table shows it, so only the block and the target are chosen), share one of their
own constraints not yet shared (in the ask mode, only to answer the partner's ask, and only where the
game accepts answers: ``EinsteinView.answers``), ask about a block whose bin they cannot tell, or pass. Where
the game refuses every move outside the valid set (``random_guess = false``: ``EinsteinView.guesses``),
the move form offers only the valid moves, listed under "Your moves", as one choice each: no choice
on offer is one the game refuses. Everything shown comes from the seat's own view: the partner's
constraints are never in it.
"""

from __future__ import annotations

from ..turn import TurnContext
from ..common.replay import Board, Span
from ..seat import ActionForm, Field, Section, Values, check_values, form_named
from .actions import Action, Ask, Grounding, Item, Move, Pass, Share, action_text, item_text
from .board import BIN_NAMES, BOARD_ORDER, COMMON, OWN, REACH, SIDE, START
from .knowledge import compact
from .validity import ASKS, SHARES, mentions, open_shares, to_item, unknown_blocks
from .view import EinsteinView, history_line, inferred, marks, my_valid_actions, partner_asked

_PLACES = {
    "top_left_bin": "top left", "bottom_left_bin": "bottom left", "top_right_bin": "top right",
    "bottom_right_bin": "bottom right", "player1_bin": "start bin (bottom)",
    "player2_bin": "start bin (top)", "commonbin": "the common bin, between you",
}


def plain(item: Item) -> str:
    """A constraint in words."""
    if isinstance(item, Grounding):
        return f"block{item.block} goes in the {_PLACES[item.bin]} bin"
    if item.kind == "bin":
        return f"block{item.a} and block{item.b} go in the same bin"
    return f"block{item.a} and block{item.b} are in the same {item.kind} (in different bins)"


def _shareable(view: EinsteinView) -> list[Item]:
    """The constraints the player may share now: its own, not shared yet and not settled on the
    table; in the ask mode only those about the block the partner just asked about."""
    explicit = [c for c in map(compact, view.knowledge) if c is not None]
    items = open_shares(view.board(), explicit, marks(view))
    if view.mode in SHARES:
        return [to_item(i) for i in items]
    asked = partner_asked(view)
    if view.mode == "ask" and asked is not None and view.answers:
        return [to_item(i) for i in items if mentions(i, asked)]
    return []


def _valid_moves(view: EinsteinView, role: str) -> dict[str, Move]:
    """The moves of the valid set (the only ones the game takes without guesses), by their choice text."""
    moves = [a for a in my_valid_actions(view, role, answers=view.answers) if isinstance(a, Move)]
    return {f"block{m.block} to {m.target}": m for m in moves}


class EinsteinSeat:
    """The seat of either player."""

    max_actions: int | None = 1
    messages = False

    def rules(self, context: TurnContext[EinsteinView]) -> str:
        view: EinsteinView = context.view
        role = context.role
        own = " and ".join(_PLACES[BIN_NAMES[b]] for b in OWN[role])
        talk = {
            "share_ask": "share one of your constraints with your partner, ask your partner about a block",
            "share": "share one of your constraints with your partner",
            "ask": "ask your partner about a block" + (
                ", share a constraint about the block your partner has just asked about" if view.answers else ""
            ),
            "none": "",
        }[view.mode]
        actions = "move one block" + (f", {talk}" if talk else "") + " or pass"
        return (
            f"You and a partner sort {view.blocks} blocks into the four bins of a table: top left, top right, bottom "
            f"left and bottom right. You sit on the {SIDE[role]} side: you reach the {own} bins, your start bin "
            f"({BIN_NAMES[START[role]]}) and the common bin between you; your partner reaches the other side's bins "
            "and the common bin, so a block for the far side goes through the common bin.\n"
            "Each of you knows some constraints on where the blocks go, and neither sees the other's. "
            "'(blockX, in, top_left_bin)' says where a block goes; '(blockX, blockY, same, row)' says two blocks "
            "are in the same row but different bins (likewise column and diagonal); '(blockX, blockY, same, bin)' "
            "says they share a bin. (X and Y stand for block numbers.) The table refuses a block put into a wrong corner bin, so a block in a corner "
            "bin is where it belongs.\n"
            + ("" if view.guesses else (
                "You move only a block whose bin you can tell from what you know: into its bin if you reach it, else "
                "into the common bin for your partner; your moves are listed.\n"
            ))
            + f"You take turns, one action a turn: {actions}. There are no messages: you tell each other things only "
            f"by sharing and asking. You win together when every block is in its bin, within {2 * context.max_turns} "
            "steps in all (each turn of either player is a step); the fewer steps, the better."
        )

    def show(self, context: TurnContext[EinsteinView]) -> tuple[Section, ...]:
        view: EinsteinView = context.view
        reach = set(view.reach)
        partner_reach = set(BIN_NAMES[b] for b in REACH[_partner(context.role)])
        rows = []
        for b in BOARD_ORDER:
            name = BIN_NAMES[b]
            who = "you and your partner" if name in reach and name in partner_reach else "you" if name in reach else "your partner"
            where = _PLACES[name]
            if b in START.values():
                where = ("your " if b == START[context.role] else "your partner's ") + where
            rows.append((
                Span(name, "strong" if name in reach else ""), Span(where),
                Span(" ".join(f"block{x}" for x in view.bins[b])), Span(who),
            ))
        table = Section(
            "The table", ("The bins, top side first, and the blocks in each.",),
            Board(("bin", "where", "blocks", "within reach of"), tuple(rows)),
        )
        known = Section(
            "Your knowledge", tuple(f"{item_text(i)}: {plain(i)}" for i in view.knowledge) or ("No constraints.",),
        )
        steps = len(view.history)
        lines = [f"Step {steps + 1} of {2 * context.max_turns}: your turn."]
        asked = partner_asked(view)
        if asked is not None:
            lines.append(f"Your partner has just asked about block{asked}.")
        lines += [history_line(e) for e in view.history] or ["This is the first turn."]
        if view.guesses:
            return table, known, Section("History", tuple(lines))
        moves = Section(
            "Your moves", tuple(_valid_moves(view, context.role)) or ("No move: you cannot tell yet where a block within reach goes.",),
        )
        return table, known, moves, Section("History", tuple(lines))

    def forms(self, context: TurnContext[EinsteinView]) -> tuple[ActionForm, ...]:
        view: EinsteinView = context.view
        role = context.role
        forms = []
        # Blocks in a corner bin are where they belong: the ones to move are in the start or common bin.
        blocks = sorted(x for b in (START[role], COMMON) for x in view.bins[b])
        if not view.guesses:
            valid = tuple(_valid_moves(view, role))
            if valid:
                forms.append(ActionForm(
                    "move", "Move a block", (Field("move", "Move", "choice", valid),),
                    help="a block whose bin you can tell, towards it: into its bin if you reach it, else into the common bin",
                ))
        elif blocks:
            targets = tuple(BIN_NAMES[b] for b in (*OWN[role], COMMON))
            forms.append(ActionForm(
                "move", "Move a block",
                (Field("block", "Block", "choice", tuple(f"block{x}" for x in blocks)),
                 Field("target", "To", "choice", targets)),
                help="a block from your start bin or the common bin, into a bin you reach",
            ))
        items = _shareable(view)
        if items:
            forms.append(ActionForm(
                "share", "Share a constraint", (Field("item", "Constraint", "choice", tuple(item_text(i) for i in items)),),
                help="your partner learns it",
            ))
        if view.mode in ASKS:
            unknown = unknown_blocks(inferred(view))
            if unknown:
                forms.append(ActionForm(
                    "ask", "Ask about a block", (Field("block", "Block", "choice", tuple(f"block{x}" for x in unknown)),),
                    help="a block whose bin you cannot tell from what you know",
                ))
        forms.append(ActionForm("pass", "Pass", help="do nothing this step (the step is spent)"))
        return tuple(forms)

    def action(self, context: TurnContext[EinsteinView], kind: str, values: Values) -> Action:
        view: EinsteinView = context.view
        form = form_named(self.forms(context), kind)
        checked = check_values(form, values)
        if kind == "pass":
            return Pass()
        if kind == "share":
            return Share(next(i for i in _shareable(view) if item_text(i) == checked["item"]))
        if kind == "move" and not view.guesses:
            return _valid_moves(view, context.role)[checked["move"]]
        block = int(checked["block"][len("block"):])
        if kind == "ask":
            return Ask(block)
        source = BIN_NAMES[view.board()[block]]
        if source == checked["target"]:
            raise ValueError(f"To: block{block} is in {source} already")
        return Move(block, source, checked["target"])

    def describe(self, action: Action) -> str:
        return "pass" if isinstance(action, Pass) else action_text(action)

    def idle(self, context: TurnContext[EinsteinView]) -> tuple[Action, ...]:
        """A person who lets the time run out passes."""
        return (Pass(),)


def _partner(role: str) -> str:
    return next(r for r in START if r != role)


SEAT = EinsteinSeat()
