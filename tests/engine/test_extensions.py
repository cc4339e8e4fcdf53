"""More agents, topologies, turn orders, channels in play, action limits, scratchpads, leak audit."""

import dataclasses

import msgspec
import pytest

from bus import ChannelSpec
from engine import Grid, PolicyFactory
from puzzles import GAMES, Answer
from puzzles.chain.rules import CHAIN_ROLES, generate_chain
from runners.concurrent import main as run_main
from tests.helpers import play, spec


def chain(index=0, **fields):
    fields = {"carol": "share_everything", "size": 5, **fields}
    return spec(index, game="chain", **fields)


# ---- The K-agent puzzle ----


@pytest.mark.parametrize("agents", [2, 3, 4])
def test_chain_puzzle_gives_each_agent_one_link(agents):
    for seed in range(20):
        puzzle = generate_chain(6, agents, seed)
        assert puzzle == generate_chain(6, agents, seed)
        assert puzzle.roles == CHAIN_ROLES[:agents]
        truth = puzzle.truth
        assert all(len(item) == agents for item in truth)
        assert [item[0] for item in puzzle.clues["alice"]] == [item[0] for item in truth]
        for i, role in enumerate(puzzle.roles[1:], start=1):
            links = puzzle.clues[role]
            assert sorted((item[i - 1], item[i]) for item in links) == sorted((t[i - 1], t[i]) for t in truth)
            assert all(v is None for item in links for k, v in enumerate(item) if k not in (i - 1, i))


@pytest.mark.parametrize(
    "topology, turn_order, rounds",
    [("all", "round_robin", 2), ("all", "simultaneous", 2), ("chain", "round_robin", 3),
     ("chain", "simultaneous", 3), ("directed", "round_robin", 3), ("directed", "simultaneous", 3)],
)
def test_three_agents_sharing_everything_solve_in_the_expected_rounds(topology, turn_order, rounds):
    """All: everyone hears everyone, so the last to speak knows everything in round 1 and the others
    read it in round 2. Chain: Bob relays, so Alice hears Carol's link only in round 3. Directed: each
    message reaches one partner, chosen in turn, so the last agent learns everything in round 3."""
    for index in range(6):
        record = play(chain(index, topology=topology, turn_order=turn_order))
        assert (record.outcome, record.solved_turn) == ("success", rounds)


def test_four_agents_in_a_chain_need_three_relays():
    record = play(spec(0, game="chain", carol="share_everything", dave="share_everything", size=6, topology="chain"))
    assert (record.outcome, record.solved_turn) == ("success", 4)


def test_no_two_agents_solve_without_the_third():
    class SilentCarol(PolicyFactory):
        def make(self, name, role, seed, game):
            if role != "carol":
                return super().make(name, role, seed, game)

            class Silent:
                async def reply(self, context):
                    return Answer('{"message": "", "actions": []}')
            return Silent()

    for index in range(5):
        record = play(chain(index), SilentCarol())
        assert record.outcome == "failure"
        # Without Carol's patterns nobody can write a whole position.
        assert record.metrics["correct_positions"] == {"alice": 0, "bob": 0, "carol": 0}
        # Carol talking but not listening: the others solve, she cannot, so the game is not solved.
        record = play(chain(index, carol="ignore"))
        assert record.outcome == "failure"
        assert record.metrics["correct_positions"] == {"alice": 5, "bob": 5, "carol": 0}


# ---- Channels ----


def test_delayed_channel_slows_share_everything_and_is_recorded():
    # Without delay Bob hears Alice in round 1 and Alice hears Bob in round 2. With a delay of one
    # turn: Bob hears Alice in round 2, Alice hears Bob's round-1 message in round 3.
    record = play(spec(0, channel=ChannelSpec(delay=1)))
    assert (record.outcome, record.solved_turn) == ("success", 3)
    first = record.channel_log[0]
    assert (first.turn, first.sender, first.recipient, first.delay, first.fate) == (1, "alice", "bob", 1, "delivered")
    assert record.channel_log[-1].fate == "undelivered (game over)"  # said in the last round
    assert play(spec(0, channel=ChannelSpec(delay=2))).solved_turn == 4


class Recording(PolicyFactory):
    """share_everything, remembering every context each agent was shown."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def make(self, name, role, seed, game):
        inner = super().make(name, role, seed, game)
        seen = self.seen

        class Policy:
            async def reply(self, context):
                seen.append(context)
                return await inner.reply(context)

        return Policy()


def test_a_rejected_message_is_reported_to_its_sender():
    factory = Recording()
    record = play(spec(0, max_turns=2, channel=ChannelSpec(max_chars=20, over_budget="reject")), factory)
    assert record.outcome == "failure"
    assert all(d.fate == "rejected" and d.delivered_chars == 0 for d in record.channel_log)
    alice_second = [c for c in factory.seen if c.role == "alice"][1]
    assert any("was not delivered" in n for n in alice_second.notices)
    assert all(c.conversation == () or all(l.sender == c.role for l in c.conversation) for c in factory.seen)


def test_directed_messages_reach_only_the_named_partner():
    class Pointing(PolicyFactory):
        def make(self, name, role, seed, game):
            class Policy:
                async def reply(self, context):
                    if role == "alice":
                        return Answer('{"message": "for carol only", "actions": [], "to": "carol"}')
                    if role == "bob":
                        return Answer('{"message": "to nobody", "actions": []}')
                    heard.append((context.turn, [l.text for l in context.conversation if l.sender != "carol"]))
                    return Answer('{"message": "", "actions": []}')
            return Policy()

    heard = []
    factory = Pointing()
    record = play(chain(0, topology="directed", max_turns=2), factory)
    assert record.outcome == "failure"
    assert heard == [(1, ["for carol only"]), (2, ["for carol only"])]


# ---- Other knobs ----


def test_action_limit_spreads_the_writes_over_turns():
    record = play(spec(0, max_actions=2))
    assert (record.outcome, record.solved_turn) == ("success", 4)  # Alice's 5 colors, 2 per turn
    alice_turn_2 = next(t for t in record.turn_log if (t.turn, t.role) == (2, "alice"))
    assert alice_turn_2.applied == 2
    assert [r.reason for r in alice_turn_2.rejected] == ["over the limit of 2 actions per turn"] * 3


def test_scratchpad_replaces_the_reinjected_clues():
    class Noting(PolicyFactory):
        def make(self, name, role, seed, game):
            class Policy:
                async def reply(self, context):
                    seen.append((role, context.turn, context.reinjected, context.scratchpad))
                    return Answer('{"message": "", "actions": [], "scratchpad": "note %d"}' % context.turn)
            return Policy()

    seen = []
    play(spec(0, max_turns=3, memory="scratchpad"), Noting())
    assert [s for s in seen if s[0] == "alice"] == [("alice", 1, True, None), ("alice", 2, False, "note 1"), ("alice", 3, False, "note 2")]
    assert play(spec(0, memory="scratchpad")).solved_turn == 2  # the scripted agents keep their own notes


# ---- Leak audit ----


POLICIES = ["share_everything", "one_piece", "noisy", "ignore"]


@pytest.mark.parametrize("policy", POLICIES)
def test_leak_audit_passes_honest_games(policy):
    """Every policy, distractors on either side, limited and lossy channels, detailed feedback on
    both sides, and the chain puzzle with 2 to 4 agents under every topology: no false alarm."""
    channels = [None, ChannelSpec(max_tokens=15), ChannelSpec(drop=0.3, noise=0.05)]
    for index, (partner, side, channel) in enumerate(zip(POLICIES * 3, ["alice", "bob"] * 6, channels * 4)):
        game = spec(index, alice=policy, bob=partner, distractors=3, distractors_in=side,
                    feedback="both_detailed", channel=channel, leak_audit=True)
        assert play(game).error is None
    for index, (extra, topology) in enumerate([({}, "all"), ({"carol": policy}, "chain"),
                                                ({"carol": policy, "dave": policy}, "directed")]):
        game = spec(index, game="chain", alice=policy, bob=policy, topology=topology, turn_order="simultaneous",
                    feedback="both_detailed", leak_audit=True, **extra)
        assert play(game).error is None


def _leaky(base: str, victim: str, source: str) -> dict:
    """A faulty game whose feedback hands ``victim`` the private information of ``source``."""
    game = GAMES[base]

    def leak(honest):
        return lambda state, role: (honest(state, role), state.private(source) if role == victim else None)

    return {base: dataclasses.replace(game, rules=dataclasses.replace(game.rules, feedback={m: leak(f) for m, f in game.rules.feedback.items()}))}


@pytest.mark.parametrize(
    "base, agents, victim, source",
    [("asympuzl", {}, "alice", "bob"),  # Bob's shape-color pairs
     ("asympuzl", {}, "bob", "alice"),  # Alice's order of shapes
     ("chain", {"carol": "share_everything"}, "alice", "bob"),  # a middle link
     ("chain", {"carol": "share_everything", "dave": "share_everything"}, "bob", "carol")],
)
def test_leak_audit_catches_a_planted_leak(base, agents, victim, source):
    record = play(spec(0, game=base, leak_audit=True, **agents), games=_leaky(base, victim, source))
    assert record.outcome == "error"
    assert (record.error.kind, record.error.actor, record.error.type) == ("leak", victim, "LeakDetected")
    assert "private to another agent" in record.error.message


@pytest.mark.parametrize("strategy", ["optimal", "share_everything", "seek_only", "random_mover"])
def test_leak_audit_passes_honest_einstein_games_where_block_numbers_are_public(strategy):
    """Every pair of block numbers is on the table for all to see, so the audit looks for whole
    constraints (the game's ``secrets``); shared constraints reach the partner through the channel."""
    for index, actions in enumerate(["share_ask", "share", "ask", "none", "share_ask/ask"]):
        config = Grid(game="einstein", seeds=index + 1, agents=[[strategy, strategy]], leak_audit=True,
                      params={"blocks": [5], "actions": [actions]})
        assert play(config.spec(index)).error is None


def test_leak_audit_catches_a_constraint_the_table_shows_before_it_was_shared():
    game = GAMES["einstein"]

    def new(params, seed, roles, max_turns):
        state = game.rules.new(params, seed, roles, max_turns)
        honest = state.view

        def view(role):
            shown = honest(role)
            if role == "player2" and state.steps >= 2:  # player1's constraints, never shared
                shown = msgspec.structs.replace(shown, knowledge=shown.knowledge + state.private("player1"))
            return shown

        state.view = view
        return state

    leaky = {"einstein": dataclasses.replace(game, rules=dataclasses.replace(game.rules, new=new))}
    config = Grid(game="einstein", seeds=1, agents=[["seek_only", "seek_only"]], leak_audit=True, params={"actions": ["ask"]})
    record = play(config.spec(0), games=leaky)
    assert (record.outcome, record.error.kind, record.error.actor) == ("error", "leak", "player2")
    assert "(block" in record.error.message and "never delivered to player2" in record.error.message


# ---- The command line ----


def test_command_line_options_reach_the_games(tmp_path):
    out = tmp_path / "run"
    assert run_main(["--games", "6", "--game", "chain", "--carol", "share_everything", "--topology", "chain",
                     "--max-message-tokens", "200", "--leak-audit", "--out", str(out), "--no-dashboard"]) == 0
    from engine import RunDir

    records = RunDir.open(out).records()
    assert all(r.outcome == "success" and r.solved_turn == 3 for r in records)
    options = records[0].spec.options
    assert options.channel == ChannelSpec(max_tokens=200) and options.topology == "chain"
    assert list(records[0].spec.agents) == ["alice", "bob", "carol"]


@pytest.mark.parametrize(
    "args, flag",
    [(["--carol", "noisy"], "--carol"), (["--game", "chain", "--distractors", "2"], "--distractors"),
     (["--noise", "2"], "--noise"), (["--topology", "ring"], "--topology"), (["--game", "tetris"], "--game"),
     (["--game", "chain", "--agent", "erin=noisy"], "--agent"), (["--agent", "alice"], "--agent")],
)
def test_bad_extension_arguments(args, flag, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_main([*args, "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and flag in err and err.count("\n") == 1


@pytest.mark.parametrize("policy", POLICIES)
def test_every_scripted_policy_plays_the_chain_puzzle(policy):
    expected = {"share_everything": ("success", 2), "one_piece": ("success", 6), "ignore": ("failure", None)}
    for index in range(3):
        record = play(spec(index, game="chain", alice=policy, bob=policy, carol=policy))
        assert record.error is None
        if policy in expected:
            assert (record.outcome, record.solved_turn) == expected[policy]
    noisy = [play(spec(i, game="chain", alice="noisy", bob="noisy", carol="noisy", feedback=mode)).outcome
             for mode in ("own_detailed", "none") for i in range(10)]
    assert noisy[:10].count("success") > noisy[10:].count("success")


def test_resume_compares_each_channel_flag(tmp_path, capsys):
    out = tmp_path / "run"
    assert run_main(["--games", "3", "--noise", "0.1", "--drop", "0.2", "--out", str(out), "--no-dashboard"]) == 0
    assert run_main(["--resume", str(out), "--noise", "0.1", "--no-dashboard"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        run_main(["--resume", str(out), "--drop", "0.5"])
    assert "argument --drop: the run being resumed has --drop 0.2, got 0.5" in capsys.readouterr().err
