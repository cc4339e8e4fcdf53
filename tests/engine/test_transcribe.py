"""Messages-only transcripts against full ones: both taps watch the same game, and every turn of the
messages-only line says what the full line says of it, field by field (the full collector keeps each
message as it arrives and is written apart from the messages-only one). Played with channels that
drop, garble and delay, simultaneous turns, directed messages, best of n, format errors and a game
that ends in an error mid-turn."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from bus import ChannelSpec
from engine import Grid, PolicyFactory, play_game
from engine.records.transcribe import TranscriptMaker
from engine.records.transcripts import TranscriptTurn
from puzzles.asympuzl.scripted import ShareEverything

HERE = "tests.engine.test_transcribe"


class FailsOnItsSecondTurn(ShareEverything):
    async def reply(self, context):
        if context.turn > 1:
            raise RuntimeError("the policy broke")
        return await super().reply(context)


SETUPS = {
    "default": Grid(seeds=3),
    "noisy channel": Grid(seeds=4, agents=[["noisy", "share_everything"]], channel=[ChannelSpec(drop=0.3, noise=0.05)]),
    "delayed, simultaneous": Grid(seeds=4, turn_order=["simultaneous"], channel=[ChannelSpec(delay=1, max_chars=60)]),
    "directed chain": Grid(game="chain", seeds=3, topology=["directed"],
                           agents=[["noisy", "share_everything", "one_piece"]]),
    "best of n": Grid(game="einstein", seeds=2, params={"blocks": [4], "verifier": ["reasoning"], "candidates": [3]},
                      agents=[["random_mover", "random_mover"]]),
    "an error mid-game": Grid(seeds=2, agents=[[f"{HERE}:FailsOnItsSecondTurn", "share_everything"]]),
}

SHARED = ("turn", "role", "feedback", "notices", "message", "actions", "rejected", "format_error", "progress",
          "usage", "chosen", "human")


def lines(spec) -> tuple[dict, dict]:
    full, messages = TranscriptMaker(full=True), TranscriptMaker(full=False)
    record = anyio.run(lambda: play_game(spec, PolicyFactory(), [full.game_started(spec), messages.game_started(spec)]))
    return msgspec.json.decode(full.line(spec, record)), msgspec.json.decode(messages.line(spec, record))


@pytest.mark.parametrize("name", list(SETUPS))
def test_each_messages_only_turn_says_what_the_full_turn_says(name):
    plan = SETUPS[name]
    seen = {"turns": 0, "heard": 0, "delivered": 0, "candidates": 0, "unplayed": 0}
    for index in range(plan.seeds):
        full, messages = lines(plan.spec(index))
        assert (messages["game_id"], messages["spec"], messages["outcome"]) == (full["game_id"], full["spec"], full["outcome"])
        assert messages["detail"] == "messages" and len(messages["turns"]) == len(full["turns"])
        for small, big in zip(*(msgspec.convert(t["turns"], list[TranscriptTurn]) for t in (messages, full))):
            for field in SHARED:
                assert getattr(small, field) == getattr(big, field), (name, index, field)
            assert small.latency == (None if big.latency is None else round(big.latency, 6))
            # each delivery, whether it reached its recipient as sent (heard) or changed (delivered)
            as_sent = [d.recipient for d in big.delivered if d.text == big.message]
            changed = [d for d in big.delivered if d.text != big.message]
            assert (small.heard, small.delivered) == (as_sent, changed)
            assert small.recipients() == big.delivered
            assert small.candidates == [{**c, "reply": ""} for c in big.candidates]  # each as read, without its reply
            assert small.reply == ("" if big.format_error is None else big.reply[:2000])
            seen["turns"] += 1
            seen["heard"] += len(as_sent)
            seen["delivered"] += len(changed)
            seen["candidates"] += len(big.candidates)
            seen["unplayed"] += big.latency is None
    assert seen["turns"] > 0
    # each setup reaches the part of the collector it is here for
    wanted = {"noisy channel": "delivered", "delayed, simultaneous": "delivered", "best of n": "candidates",
              "an error mid-game": "unplayed", "default": "heard", "directed chain": "heard"}[name]
    assert seen[wanted] > 0, seen


NEIGHBOURS = {"all": lambda roles, r: [x for x in roles if x != r],
              "chain": lambda roles, r: [roles[i] for i in (roles.index(r) - 1, roles.index(r) + 1) if 0 <= i < len(roles)]}


@pytest.mark.parametrize("order", ["round_robin", "simultaneous"])
@pytest.mark.parametrize("topology", ["all", "chain"])
@pytest.mark.parametrize("game, agents", [("asympuzl", 2), ("chain", 2), ("chain", 3), ("chain", 4)])
def test_every_message_is_recorded_as_delivered_to_whom_the_topology_connects(game, agents, topology, order):
    """Each turn's message reached every role the topology connects its sender to, at both levels of
    detail, in either turn order; the messages of the last round under simultaneous turns were never
    heard (a round's messages are heard in the next) and are recorded as delivered to no one."""
    plan = Grid(game=game, seeds=3, topology=[topology], turn_order=[order], agents=[["share_everything"] * agents])
    checked = 0
    for index in range(plan.seeds):
        full, messages = lines(plan.spec(index))
        roles = list(plan.spec(index).agents)
        last = max(t["turn"] for t in full["turns"])
        for small, big in zip(*(msgspec.convert(t["turns"], list[TranscriptTurn]) for t in (messages, full))):
            assert big.message, (index, big.turn, big.role)  # share_everything always speaks
            unheard = order == "simultaneous" and big.turn == last
            wanted = [] if unheard else NEIGHBOURS[topology](roles, big.role)
            assert sorted(d.recipient for d in big.recipients()) == sorted(wanted), (index, big.turn, big.role)
            assert sorted(d.recipient for d in small.recipients()) == sorted(wanted), (index, big.turn, big.role)
            assert all(d.text == big.message for d in small.recipients() + big.recipients())
            checked += not unheard
    assert checked >= 3 * agents
