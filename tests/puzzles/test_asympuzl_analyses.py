"""AsymPuzl's analyses (``puzzles.asympuzl.analyses``, rules in ``puzzles.positions.analyses``) on
hand-written games: each strategy class and each failure signature from turns written for it, the
tables' arithmetic, games that cannot be replayed, and hostile text that must not stop a report."""

from __future__ import annotations

import msgspec
import pytest

from puzzles import GAMES, PlayedGame, PlayedTurn
from puzzles.asympuzl.analyses import analyses
from puzzles.asympuzl.rules import generate
from puzzles.positions.reading import MESSAGE_CHARS, read_game

SEED, SIZE = 1, 3
PUZZLE = generate(SIZE, SEED)  # truth: nonagon olive, droplet brown, pentagon khaki; Bob's pairs in another order
TRUTH = [(p.shape, p.color) for p in PUZZLE.truth]
SHAPES = [p.shape for p in PUZZLE.clues["alice"]]
PAIRS = [(p.shape, p.color) for p in PUZZLE.clues["bob"]]
ALL_SHAPES = "My shapes in order: " + ", ".join(SHAPES) + "."
ALL_PAIRS = "; ".join(f"the {s} is {c}" for s, c in PAIRS) + "."


def write(*positions: int, colors: dict[int, str] | None = None) -> tuple[dict, ...]:
    """Actions that put the true piece (or the true shape in another color) at these positions."""
    colors = colors or {}
    return tuple({"position": p, "shape": TRUTH[p - 1][0], "color": colors.get(p, TRUTH[p - 1][1])} for p in positions)


def turn(n: int, role: str, message: str = "", actions=(), **more) -> PlayedTurn:
    return PlayedTurn(turn=n, role=role, message=message, actions=tuple(actions), **more)


def game(*turns: PlayedTurn, outcome: str = "failure", condition: str = "hand", **fields) -> PlayedGame:
    values = dict(condition=condition, agents={"alice": "hand", "bob": "hand"}, params={"game": "asympuzl", "size": SIZE},
                  seed=SEED, outcome=outcome, scores={}, metrics={}, turns=turns, max_turns=2 * SIZE)
    return PlayedGame(**(values | fields))


def read(played: PlayedGame) -> dict:
    rules = GAMES["asympuzl"].rules
    return read_game(played, rules.Params, rules.new, rules.Action)


ALL_AT_ONCE = game(
    turn(1, "alice", ALL_SHAPES),
    turn(1, "bob", ALL_PAIRS, write(1, 2, 3)),
    turn(2, "alice", "Thanks.", write(1, 2, 3)),
    outcome="success",
)
PIECE_BY_PIECE = game(
    turn(1, "alice", f"Position 1 is the {SHAPES[0]}. What color is it?"),
    turn(1, "bob", f"The {TRUTH[0][0]} is {TRUTH[0][1]}.", write(1)),
    turn(2, "alice", f"Position 2 is the {SHAPES[1]}.", write(1)),
    turn(2, "bob", f"The {TRUTH[1][0]} is {TRUTH[1][1]}.", write(2)),
    turn(3, "alice", f"Position 3 is the {SHAPES[2]}.", write(2)),
    turn(3, "bob", f"The {TRUTH[2][0]} is {TRUTH[2][1]}.", write(3)),
    turn(4, "alice", "That is all.", write(3)),
    outcome="success",
)
IGNORES = game(
    turn(1, "alice", ALL_SHAPES), turn(1, "bob", ALL_PAIRS),
    turn(2, "alice", ALL_SHAPES), turn(2, "bob", ALL_PAIRS),
)
SILENT = game(turn(1, "alice"), turn(1, "bob"), turn(2, "alice"), turn(2, "bob"))


@pytest.mark.parametrize("played, alice, bob", [
    (ALL_AT_ONCE, "all at once", "all at once"),
    (PIECE_BY_PIECE, "piece by piece", "piece by piece"),
    (IGNORES, "ignores", "ignores"),
    (SILENT, "other", "other"),
])
def test_each_class_from_turns_written_for_it(played, alice, bob):
    readings = read(played)
    assert (readings["alice"].strategy, readings["bob"].strategy) == (alice, bob)


def test_ignoring_is_idle_but_waiting_for_the_partner_is_not():
    readings = read(IGNORES)
    assert readings["alice"].idle and readings["bob"].idle  # each had heard what fixes its positions
    assert not any(r.idle for r in read(SILENT).values())  # nothing heard: nothing to do
    assert not any(r.idle for r in read(ALL_AT_ONCE).values())  # Alice's first turn waits, not idles


def test_idle_after_acting_once_is_a_signature_but_not_ignoring():
    played = game(
        turn(1, "alice", ALL_SHAPES), turn(1, "bob", ALL_PAIRS, write(1, 2, 3)),
        turn(2, "alice", "", write(1)), turn(3, "alice", "Still thinking."),
    )
    alice = read(played)["alice"]
    assert alice.idle and alice.strategy == "all at once"


def test_a_pair_is_mentioned_only_with_both_words_and_a_shape_inside_a_pair_is_bobs_not_alices():
    half = game(turn(1, "alice", ALL_SHAPES), turn(1, "bob", " ".join(s for s, _ in PAIRS), write(1, 2, 3)),
                turn(2, "alice", "ok"), turn(2, "bob", " ".join(c for _, c in PAIRS)))
    assert read(half)["bob"].strategy == "other" and not read(half)["alice"].idle  # shapes alone fix nothing for Alice
    relayed = game(turn(1, "alice", ALL_PAIRS), turn(1, "bob", "ok"))  # Alice repeats pairs she never had
    assert read(relayed)["bob"].idle is False  # the shapes inside the pairs do not tell Bob their positions


def test_a_reply_that_could_not_be_read_is_neither_idle_nor_ignoring():
    played = game(turn(1, "alice", ALL_SHAPES), turn(1, "bob", format_error="no JSON object"),
                  turn(2, "alice", ALL_SHAPES), turn(2, "bob", format_error="no JSON object"))
    bob = read(played)["bob"]
    assert bob.strategy == "other" and not bob.idle


def test_a_reply_with_actions_that_were_all_rejected_is_not_idle():
    unread = {"action": '{"replace": "first"}', "reason": "a position must be a number"}
    played = game(turn(1, "alice", ALL_SHAPES), turn(1, "bob", ALL_PAIRS, rejected=(unread,)))
    assert not read(played)["bob"].idle
    assert read(game(turn(1, "alice", ALL_SHAPES), turn(1, "bob", ALL_PAIRS)))["bob"].idle


@pytest.mark.parametrize("changes, overcorrected", [(3, False), (4, True)])
def test_four_modifications_of_one_position_is_over_correction(changes, overcorrected):
    colors = ["red", "blue", "green", "yellow"]
    turns = [turn(1, "alice", ALL_SHAPES), turn(1, "bob", ALL_PAIRS)]
    turns += [turn(k + 2, "alice", "trying", write(1, colors={1: colors[k]})) for k in range(changes)]
    turns += [turn(9, "alice", "again", write(1, colors={1: colors[changes - 1]}))]  # a write that changes nothing
    assert read(game(*turns))["alice"].overcorrected is overcorrected


def test_distractors_in_alices_clues_are_her_facts_too():
    puzzle = generate(SIZE, SEED, 2, "alice")
    shapes = ", ".join(p.shape for p in puzzle.clues["alice"])
    params = {"size": SIZE, "distractors": 2, "distractors_in": "alice"}
    some = game(turn(1, "alice", f"My shapes: {', '.join(p.shape for p in puzzle.truth)}"), params=params)
    every = game(turn(1, "alice", f"My shapes: {shapes}"), params=params)
    assert read(some)["alice"].strategy == "other" and read(every)["alice"].strategy == "all at once"


def test_tables_count_each_condition_role_and_outcome():
    analysis = analyses()
    for played in (ALL_AT_ONCE, PIECE_BY_PIECE, IGNORES, SILENT):
        analysis.add(played)
    analysis.add(game(*IGNORES.turns, condition="other condition"))
    strategies, signatures = analysis.tables()
    rows = {tuple(r[:3]): r[3:] for r in strategies.rows}
    assert rows[("hand", "alice", "all")] == [4, 25.0, 25.0, 25.0, 25.0]
    assert rows[("hand", "alice", "success")] == [2, 50.0, 50.0, 0.0, 0.0]
    assert rows[("hand", "alice", "failure")] == [2, 0.0, 0.0, 50.0, 50.0]
    assert rows[("other condition", "bob", "all")] == [1, 0.0, 0.0, 100.0, 0.0]
    assert ("other condition", "bob", "success") not in rows  # no game of that outcome
    rows = {tuple(r[:2]): r[2:] for r in signatures.rows}
    assert rows[("hand", "alice")] == [4, 2, 50.0, 25.0, 0.0, 0.0]  # IGNORES: idle, and failed
    assert rows[("hand", "any")] == [4, 2, 50.0, 25.0, 0.0, 0.0]
    assert rows[("other condition", "any")] == [1, 1, 100.0, 100.0, 0.0, 0.0]
    assert signatures.labels == 2 and strategies.labels == 3


def test_no_failed_game_leaves_the_percentages_of_failed_games_empty():
    analysis = analyses()
    analysis.add(ALL_AT_ONCE)
    _, signatures = analysis.tables()
    assert signatures.rows[0] == ["hand", "alice", 1, 0, None, 0.0, None, 0.0]


def test_the_single_agent_check_has_signatures_but_no_strategy():
    analysis = analyses()
    analysis.add(game(turn(1, "solo"), agents={"solo": "hand"}, max_turns=1))
    (signatures,) = analysis.tables()
    assert signatures.name == "failure_signatures"
    assert signatures.rows == [["hand", "solo", 1, 1, 100.0, 100.0, 0.0, 0.0]]  # it holds everything, wrote nothing


def test_a_game_its_record_contradicts_or_the_rules_refuse_is_left_out_and_said_so():
    analysis = analyses()
    analysis.add(game(*ALL_AT_ONCE.turns, metrics={"position_writes": {"alice": [9, 9, 9], "bob": [0, 0, 0]}}))
    analysis.add(game(params={"size": 1}))  # below the smallest size
    analysis.add(game(params={"size": "five"}))
    analysis.add(game(agents={"carol": "hand"}))
    analysis.add(ALL_AT_ONCE)
    strategies, signatures = analysis.tables()
    assert [r[3] for r in strategies.rows if r[2] == "all"] == [1, 1]
    assert "hand: 4" in strategies.note and "hand: 4" in signatures.note


def test_only_unreadable_games_still_make_a_table_that_says_so():
    analysis = analyses()
    analysis.add(game(params={"size": 1}))
    (table,) = analysis.tables()
    assert table.rows == [["hand", 1]]


def test_an_action_limit_is_found_from_the_record():
    """With one action applied per turn (``--max-actions 1``) the record counts one write per turn;
    the replay applies the first action of each turn only, as the referee did."""
    played = game(
        turn(1, "alice", ALL_SHAPES), turn(1, "bob", ALL_PAIRS, write(1, 2, 3)),
        turn(2, "alice", "", write(1, 2, 3)), turn(2, "bob", "", write(2, 3)),
        metrics={"position_writes": {"alice": [1, 0, 0], "bob": [1, 1, 0]}},
    )
    analysis = analyses()
    analysis.add(played)
    strategies, _ = analysis.tables()
    assert "Left out" not in strategies.note and [r[4] for r in strategies.rows if r[2] == "all"] == [100.0, 100.0]


HOSTILE = [
    "x" * (MESSAGE_CHARS + 10) + " " + ALL_SHAPES,  # every fact, but past what is read
    "\x00\x1b[2J\u202e" + ALL_SHAPES.upper() + "\ud800",  # control characters, a lone surrogate, upper case
    '{"message": "' + ALL_SHAPES + '", "actions": [{"replace": 1}]}',  # JSON inside the message
    "形状: " + "、".join(SHAPES) + " 🟥",  # other scripts around the words
]


def test_hostile_messages_and_actions_never_stop_the_analysis():
    garbage_actions = ["garbage", None, [1, 2], {"position": 10**30, "shape": "x" * 10_000, "color": None},
                       {"position": True, "shape": SHAPES[0], "color": "red"}, {"position": 1}]
    analysis = analyses()
    for message in HOSTILE:
        analysis.add(game(turn(1, "alice", message), turn(1, "bob", message, garbage_actions),
                          turn(2, "mallory", message), turn(2, "alice", None)))  # type: ignore[arg-type]
    strategies, _ = analysis.tables()
    first = {r[0] for r in strategies.rows}
    assert first == {"hand"} and [r[3] for r in strategies.rows if r[2] == "all"] == [4, 4]
    readings = [read(game(turn(1, "alice", m))) for m in HOSTILE]
    assert [r["alice"].strategy for r in readings] == ["other", "all at once", "all at once", "all at once"]


def test_a_message_the_channel_cut_is_heard_as_delivered():
    """Bob's pairs never reached Alice (a budget cut them): she could fix nothing, so her waiting
    is neither ignoring nor idle; with the whole message delivered, the same turns are both."""
    cut = game(
        turn(1, "alice", ALL_SHAPES, heard={"bob": ALL_SHAPES}),
        turn(1, "bob", ALL_PAIRS, heard={"alice": ALL_PAIRS[:10]}),
        turn(2, "alice", "", heard={}), turn(2, "bob", "", heard={}),
    )
    readings = read(cut)
    assert readings["alice"].strategy != "ignores" and not readings["alice"].idle
    whole = game(*[msgspec.structs.replace(t, heard=None) for t in cut.turns])
    assert read(whole)["alice"].idle and read(whole)["alice"].strategy == "ignores"


def test_in_simultaneous_turns_a_message_is_heard_from_the_next_round_on():
    """Both speak in round 1 and act at once: in round 1 Bob cannot have heard Alice's shapes yet,
    so a round-1 Bob with no action is not idle; under round robin he had heard them."""
    turns = (turn(1, "alice", ALL_SHAPES), turn(1, "bob", ALL_PAIRS), turn(2, "alice", "", write(1, 2, 3)),
             turn(2, "bob", "", write(1, 2, 3)))
    assert not read(game(*turns, options={"turn_order": "simultaneous"}))["bob"].idle
    assert read(game(*turns))["bob"].idle
