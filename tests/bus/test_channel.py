"""Channels: budgets per message and per game, drops, noise and delays."""

import random

from bus import ChannelSpec, Chat, PolicyChannel
from bus.channel import Spend


def _chat(text, turn=1):
    return Chat(game_id=0, turn=turn, sender="alice", recipient="bob", text=text)


def test_channel_budgets_cut_or_reject():
    cut = PolicyChannel(ChannelSpec(max_chars=5), random.Random(0))
    now, delivery, notice = cut.transmit(_chat("hello world"))
    assert now[0].text == "hello" and delivery.fate == "truncated" and notice is None
    assert (delivery.sent_chars, delivery.delivered_chars) == (11, 5)
    words = PolicyChannel(ChannelSpec(max_tokens=2), random.Random(0))
    assert words.transmit(_chat("one two three"))[0][0].text == "one two"
    reject = PolicyChannel(ChannelSpec(max_tokens=2, over_budget="reject"), random.Random(0))
    now, delivery, notice = reject.transmit(_chat("one two three"))
    assert now == () and delivery.fate == "rejected" and "over the channel's budget" in notice
    assert reject.transmit(_chat("one two"))[0][0].text == "one two"


def test_game_budget_is_per_sender_and_runs_out():
    spend = Spend()
    to_bob = PolicyChannel(ChannelSpec(game_chars=8), random.Random(0), spend=spend)
    to_carol = PolicyChannel(ChannelSpec(game_chars=8), random.Random(0), spend=spend)
    assert to_bob.transmit(_chat("abcde"))[0][0].text == "abcde"
    assert to_carol.transmit(_chat("fghij"))[0][0].text == "fgh"  # the same sender's budget
    now, delivery, notice = to_bob.transmit(_chat("klm"))
    assert now == () and delivery.fate == "budget spent" and "budget is spent" in notice


def test_drop_noise_and_delay():
    dropped = PolicyChannel(ChannelSpec(drop=1.0), random.Random(0)).transmit(_chat("hi"))
    assert dropped[0] == () and dropped[1].fate == "dropped"
    text = "the square is blue; the circle is red"
    noisy = [PolicyChannel(ChannelSpec(noise=0.2), random.Random(s)).transmit(_chat(text))[0][0].text for s in (1, 1, 2)]
    assert noisy[0] == noisy[1] != text and noisy[0] != noisy[2]  # seeded
    late = PolicyChannel(ChannelSpec(delay=2), random.Random(0))
    now, delivery, _ = late.transmit(_chat("later"))
    assert now == () and delivery.delay == 2 and delivery.fate == "delivered"
    # Held for two of Bob's turns after the one at which he would have heard it.
    assert late.release("carol") == () and late.release("bob") == () and late.release("bob") == ()
    assert late.release("bob")[0].text == "later" and late.release("bob") == ()
    late.transmit(_chat("never heard"))
    assert [d.fate for d in late.undelivered()] == ["undelivered (game over)"]
