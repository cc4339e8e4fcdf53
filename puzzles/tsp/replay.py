"""Traveling Adventurers in a replay: the board (every hallway with both players' coins and their
sum), the optimum, and after each turn what the player has agreed, visited and submitted."""

from __future__ import annotations


from ..common.replay import Board, Line, Mark, Span, line, role_name
from .rules import TspAction, TspGame
from .solver import is_tour, tour_score


class TspReplay:
    def header(self, state: TspGame) -> list[Line]:
        board = state.board
        roles = state.roles
        lines = [line(Span(f"board {board.source}: rooms {' '.join(board.rooms)}", "strong"))]
        head = "hallway  " + "  ".join(f"{role_name(r):>6}" for r in roles) + "   joint"
        lines.append(line(head))
        for a, b in board.edges():
            coins = "  ".join(f"{board.weight(r, a, b):>6}" for r in roles)
            lines.append(line(f"{a}-{b}      {coins}   {board.joint(a, b):>5}"))
        best = ", ".join(" ".join(tour) for tour in state.solution.tours)
        lines.append(line(Span(f"optimum {state.solution.optimum}: {best}", "strong")))
        return lines

    def feedback(self, feedback: object) -> str | None:
        return None

    def actions(self, actions: tuple[TspAction, ...]) -> str:
        return ", ".join(str(action) for action in actions)

    def after(self, state: TspGame, role: str) -> list[Line]:
        player = state.players[role]
        lines = []
        agreed = [f"{name} {', '.join(paths)}" for name, paths in player.agreements.items() if paths]
        if agreed:
            lines.append(line("agreements: " + "; ".join(agreed)))
        if state.params.variant in ("state_tracking", "problem_solving"):
            lines.append(line(f"visited: {' '.join(player.visited)}"))
        if player.submitted is not None:
            path = player.submitted
            score = tour_score(path, state.board.joint)
            valid = is_tour(path, state.rooms)
            best = valid and score == state.solution.optimum
            text = f"submitted: {' '.join(path)} (score {score if score is not None else 'n/a'}"
            text += ", optimal)" if best else (")" if valid else ", not a round trip)")
            lines.append(line(Span(text, "right" if best else "wrong" if not valid else "")))
        return lines

    def board(self, state: TspGame) -> Board:
        """Every hallway with each player's coins and their sum, the optimum's hallways in bold, and
        whose submitted round trip takes it."""
        board, roles = state.board, state.roles
        optimal = {frozenset(pair) for tour in state.solution.tours[:1] for pair in zip(tour, tour[1:] + tour[:1])}
        taken: dict[frozenset, list[str]] = {}
        for role in roles:
            path = state.players[role].submitted
            if path:
                for pair in zip(path, path[1:]):
                    taken.setdefault(frozenset(pair), []).append(role_name(role))
        rows = []
        for a, b in board.edges():
            mark: Mark = "strong" if frozenset((a, b)) in optimal else ""
            cells = [Span(f"{a}-{b}", mark), *(Span(str(board.weight(r, a, b))) for r in roles), Span(str(board.joint(a, b)), mark)]
            cells.append(Span(", ".join(taken.get(frozenset((a, b)), []))))
            rows.append(tuple(cells))
        return Board(("hallway", *(role_name(r) for r in roles), "joint", "submitted by"), tuple(rows))

    def progress(self, state: TspGame, value: int | float) -> str:
        return "submitted" if value == 1 else f"{round(value * len(state.rooms))}/{len(state.rooms)} rooms"


REPLAY = TspReplay()
