"""A second, plain implementation of the step rules of spec §2.5, for checking the game against:
knowledge is what a brute-force solver says the known constraints and the board determine."""

from __future__ import annotations

from puzzles.einstein.actions import Ask, Grounding, Move, Relation, Share

from .helpers import NAME, determined

KINDS = {0: "bin", 1: "column", 2: "row", 3: "diagonal"}
OWN = {"player1": {"bottom_left_bin", "bottom_right_bin"}, "player2": {"top_left_bin", "top_right_bin"}}
START = {"player1": "player1_bin", "player2": "player2_bin"}
REACH = {r: OWN[r] | {START[r], "commonbin"} for r in OWN}
SHARE_MODES, ASK_MODES = {"share_ask", "share"}, {"share_ask", "ask"}


def as_struct(item):
    if len(item) == 2:
        return Grounding(item[0], NAME[item[1]])
    return Relation(item[0], item[1], KINDS[item[2]])


class Model:
    def __init__(self, inst, modes, *, random_guess=True, seek_answers=True):
        self.inst, self.n = inst, inst.n
        self.modes = dict(zip(("player1", "player2"), modes))
        self.random_guess, self.seek_answers = random_guess, seek_answers
        self.explicit = {r: [as_struct(inst.items[i]) for i in inst.knowledge[r]] for r in self.modes}
        self.marks = {r: set() for r in self.modes}
        self.board = ["player1_bin" if s == 4 else "player2_bin" for s in inst.start]
        self.learned = set()
        self.last = None
        self.goal = [NAME[g] for g in inst.goal]

    def partner(self, role):
        return "player2" if role == "player1" else "player1"

    def knows(self, role):
        groundings = [(g.block, g.bin) for g in self.explicit[role] if isinstance(g, Grounding)] + sorted(self.learned)
        relations = [(r.a, r.b, r.kind) for r in self.explicit[role] if isinstance(r, Relation)]
        return determined(self.n, groundings, relations)

    def settled(self, item):
        if isinstance(item, Grounding):
            return self.board[item.block] == item.bin
        return self.board[item.a] in NAME.values() and self.board[item.b] in NAME.values()

    def mentions(self, item, block):
        return item.block == block if isinstance(item, Grounding) else block in (item.a, item.b)

    def valid(self, role, action):
        mode = self.modes[role]
        for item in self.explicit[role]:
            if self.settled(item):
                self.marks[role].add(item)
        goals = self.knows(role)
        if isinstance(action, Move):
            b = action.block
            if b >= self.n or goals[b] is None or self.board[b] == goals[b] or action.source != self.board[b]:
                return False
            where, goal = self.board[b], goals[b]
            if goal in OWN[role] and where in {START[role], "commonbin"} | OWN[role]:
                return action.target == goal
            if where in {START[role]} | OWN[role]:
                return action.target == "commonbin"
            return False
        if isinstance(action, Share):
            item = action.item
            if item not in self.explicit[role] or item in self.marks[role]:
                return False
            if mode in SHARE_MODES:
                return True
            asked = self.last[1].block if self.last and self.last[0] != role and isinstance(self.last[1], Ask) else None
            return mode == "ask" and self.seek_answers and asked is not None and self.mentions(item, asked)
        if isinstance(action, Ask):
            return mode in ASK_MODES and action.block < self.n and goals[action.block] is None
        return False

    def step(self, role, action):
        """Apply one step; returns (valid, the board took a guess)."""
        ok = self.valid(role, action)
        guessed = False
        if ok and isinstance(action, Move):
            self._put(action.block, action.target)
        elif ok and isinstance(action, Share):
            partner = self.partner(role)
            if action.item not in self.explicit[partner]:
                self.explicit[partner].append(action.item)
            self.marks[role].add(action.item)
            self.marks[partner].add(action.item)
        elif not ok and isinstance(action, Move) and self.random_guess:
            b = action.block
            if b < self.n and self.board[b] == action.source and {action.source, action.target} <= REACH[role]:
                if action.target in ("commonbin", self.goal[b]) and self.board[b] != action.target:
                    self._put(b, action.target)
                    guessed = True
        self.last = (role, action)
        return ok, guessed

    def _put(self, block, target):
        self.board[block] = target
        if target != "commonbin":
            self.learned.add((block, target))

    def solved(self):
        return self.board == self.goal
