"""Rollouts for training (``engine.rollouts``): groups of K games per seed, played by scripted agents
and by models through the local model server; the same seed gives the same group; trained,
frozen and scripted seats; 3 and 4 agents in both turn orders; token ids kept only where asked and
given; a branch run's advantages in the same format; groups over channels that cut messages, and
groups through a shared response cache."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import msgspec
import pytest

from bus import Tokens
from bus.channel import ChannelSpec
from engine.analysis import advantages
from engine.backends import BackendSettings, CacheSettings
from engine.plan import Grid
from engine.records import RunDir
from engine.rollouts import (
    Group, GroupIds, MissingTokens, Settings, encode_group, rollouts, run_groups, trajectories,
)
from puzzles import GAMES
from runners.branch import main as branch_main
from runners.concurrent import main as run_main
from tests.e2e.test_model_runs import server_process

KEY = {"OPENAI_API_KEY": "sk-test-rollouts-0000"}


def collect(grid: Grid, out: Path, k: int, **kwargs) -> list[Group]:
    async def go() -> list[Group]:
        async with rollouts(grid, k=k, out=out, **kwargs) as groups:
            return [group async for group in groups]

    return sorted(anyio.run(go), key=lambda g: g.group)


@pytest.fixture(scope="module")
def model_runs(tmp_path_factory):
    """The same rollout of the chain game played twice through the local model server: alice and
    bob are models (alice trained, bob frozen), carol is scripted."""
    root = tmp_path_factory.mktemp("model_rollouts")
    grid = Grid(game="chain", seeds=2, agents=[["openai:noisy", "openai:noisy", "noisy"]], params={"size": [4]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", KEY["OPENAI_API_KEY"])
        with server_process() as url:
            models = BackendSettings(urls={"openai": url + "/v1"})
            runs = [collect(grid, root / name, 3, models=models, settings=Settings(trained=("alice",)))
                    for name in ("first", "second")]
    return root, runs


def test_the_same_seed_gives_the_same_group(model_runs):
    _, (first, second) = model_runs
    assert [g.group for g in first] == [0, 1]
    assert [encode_group(g) for g in first] == [encode_group(g) for g in second]


def test_the_members_of_a_group_are_other_samples_of_one_game(model_runs):
    _, (groups, _) = model_runs
    for group in groups:
        assert len(group.games) == 3 and {t.seed for t in group.trajectories} == {group.seed}
    replies = [[tuple(s.reply for s in t.steps) for t in g.seat("alice")] for g in groups]
    assert any(len(set(seat)) > 1 for seat in replies)  # a member is a resample, not the same game again


def test_trained_frozen_and_scripted_seats(model_runs):
    _, (groups, _) = model_runs
    for trajectory in (t for g in groups for t in g.trajectories):
        assert trajectory.trainable == (trajectory.role == "alice")
        if trajectory.role == "carol":
            assert trajectory.model is None and trajectory.sampling == {}
            assert all(step.messages == [] for step in trajectory.steps)
        else:
            assert trajectory.model == "openai:noisy" and trajectory.sampling["temperature"] == 0.0
            for step in trajectory.steps:
                assert [m.role for m in step.messages] == ["system", "user"]
                assert step.reply and step.tokens is None  # text only: no tokens were asked


def _tokens_line(line: bytes, role: str) -> bytes:
    """The transcript line with a ``tokens`` entry in every turn of ``role``, as a server gives them."""
    transcript = json.loads(line)
    for i, turn in enumerate(transcript["turns"]):
        if turn["role"] == role:
            turn["tokens"] = {"prompt_ids": [1, 2, 3 + i], "completion_ids": [7, 8 + i], "logprobs": [-0.5, -0.25 * i]}
    return json.dumps(transcript).encode()


def test_token_ids_are_kept_where_asked_and_given(model_runs):
    root, _ = model_runs
    run = RunDir.open(root / "first")
    from engine.records import TranscriptIndex

    index = TranscriptIndex(run.path)
    index.refresh()
    record = run.records()[0]
    line = index.line(record.game_id)
    game = GAMES["chain"]
    with_tokens = _tokens_line(_tokens_line(line, "alice"), "bob")
    made = {t.role: t for t in trajectories(record, with_tokens, game, tokens=True)}
    for i, step in enumerate(made["alice"].steps):
        assert step.tokens is not None and step.tokens.completion_ids[0] == 7
    first_turn = json.loads(with_tokens)["turns"][0]
    assert made["alice"].steps[0].tokens == msgspec.convert(first_turn["tokens"], Tokens)
    assert all(step.tokens is None for step in made["carol"].steps)  # scripted: no model call
    assert all(step.tokens is None for t in trajectories(record, with_tokens, game) for step in t.steps)  # text only
    with pytest.raises(MissingTokens, match=r"seat bob, turn 1: the server \(openai:noisy\) returned no token ids"):
        trajectories(record, _tokens_line(line, "alice"), game, tokens=True)


def test_a_rollout_asking_for_tokens_gets_the_servers_ids_on_every_model_turn(tmp_path):
    """Through the Python API with ``Settings(tokens=True)``: the models are asked for their tokens
    (vLLM's form, from the local server), and every model turn of every trajectory carries them,
    one log-probability per completion id; the scripted seat's turns carry none."""
    grid = Grid(game="chain", seeds=1, agents=[["vllm:noisy", "vllm:noisy", "noisy"]], params={"size": [3]})
    with server_process() as url:
        groups = collect(grid, tmp_path / "run", 2, models=BackendSettings(urls={"vllm": url + "/v1"}),
                         settings=Settings(tokens=True))
    steps = {t.role: t.steps for g in groups for t in g.trajectories}
    assert steps["alice"] and steps["bob"]
    for role in ("alice", "bob"):
        for step in steps[role]:
            assert step.tokens is not None and step.tokens.prompt_ids and step.tokens.completion_ids
            assert len(step.tokens.logprobs) == len(step.tokens.completion_ids)
    assert all(step.tokens is None for step in steps["carol"])


@pytest.mark.parametrize("turn_order", ["round_robin", "simultaneous"])
@pytest.mark.parametrize("agents", [3, 4])
def test_three_and_four_agents_in_both_turn_orders(tmp_path, turn_order, agents):
    roster = ["noisy", "one_piece", "noisy", "noisy"][:agents]
    grid = Grid(game="chain", seeds=2, agents=[roster], params={"size": [4]}, turn_order=[turn_order])
    groups = collect(grid, tmp_path / "run", 2)
    assert len(groups) == 2
    roles = GAMES["chain"].roster(agents)
    for group in groups:
        assert sorted({t.role for t in group.trajectories}) == sorted(roles)
        assert len(group.trajectories) == 2 * agents
        for trajectory in group.trajectories:
            assert trajectory.steps and [s.turn for s in trajectory.steps] == sorted({s.turn for s in trajectory.steps})
            for before, after in zip(trajectory.steps, trajectory.steps[1:]):
                assert after.reward == pytest.approx(after.progress - before.progress)
            assert trajectory.rewards["correct"] == pytest.approx(trajectory.steps[-1].progress)
            assert trajectory.advantage is not None


def test_a_plan_without_groups_or_with_a_scripted_seat_trained_is_refused(tmp_path):
    grid = Grid(game="chain", seeds=1, agents=[["noisy", "noisy", "noisy"]])
    with pytest.raises(ValueError, match="trained seat 'alice' is played by noisy, not a model"):
        collect(grid, tmp_path / "a", 2, settings=Settings(trained=("alice",)))
    with pytest.raises(ValueError, match="trained seat 'zed' is not a seat"):
        collect(msgspec.structs.replace(grid, agents=[["openai:x", "noisy", "noisy"]]), tmp_path / "b", 2,
                settings=Settings(trained=("zed",)))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()  # refused before any file


def test_a_branch_runs_advantages_reach_the_turn_it_changed(tmp_path):
    origin, branches = tmp_path / "origin", tmp_path / "branches"
    assert run_main(["--game", "chain", "--games", "3", "--size", "4", "--transcripts", "--out", str(origin), "--no-dashboard"]) == 0
    assert branch_main([str(origin), "--alternative", "noise:0.6", "--k", "3", "--turns", "1-2", "--role", "alice",
                        "--transcripts", "--out", str(branches), "--no-dashboard"]) == 0
    records = RunDir.open(branches).records()
    credit = {a.branch_game: a.advantage for a in advantages(records)}
    groups = list(run_groups(branches))
    assert len(groups) == 3 * 2  # a group per seed and turn, of its 3 branches
    seen = 0
    for group in groups:
        assert len(group.games) == 3
        for trajectory in group.trajectories:
            point = next(r for r in records if r.game_id == trajectory.game_id).spec.options.branch
            for step in trajectory.steps:
                at_point = trajectory.role == point.role and step.turn == point.turn
                assert step.advantage == (credit[trajectory.game_id] if at_point else None)
                seen += at_point
    assert seen == 3 * 2 * 3  # one changed turn per branch game


def test_a_stopped_rollout_resumes_with_the_groups_it_finished_first(tmp_path):
    grid = Grid(game="chain", seeds=3, agents=[["noisy", "noisy", "noisy"]], params={"size": [4]})
    whole = collect(grid, tmp_path / "whole", 3)
    stopped = collect(grid, tmp_path / "run", 3, limit=5)  # group 0 whole, group 1 two games of three
    assert [g.group for g in stopped] == [0]

    async def resumed(skip=()) -> list[Group]:
        async with rollouts(grid, resume=tmp_path / "run", skip=skip) as groups:
            return [group async for group in groups]

    again = anyio.run(resumed)
    assert [g.group for g in again][0] == 0  # what earlier processes finished comes first
    assert sorted(encode_group(g) for g in again) == sorted(encode_group(g) for g in whole)
    assert [g.group for g in anyio.run(resumed, {0, 1})] == [2]  # all on disk now: only what is not skipped


def test_leaving_early_stops_the_games_and_keeps_what_was_recorded(tmp_path):
    grid = Grid(game="chain", seeds=40, agents=[["noisy", "noisy", "noisy"]], params={"size": [4]})

    async def first_only() -> Group:
        async with rollouts(grid, k=2, out=tmp_path / "run", concurrency=2) as groups:
            async for group in groups:
                return group
        raise AssertionError("no group")

    group = anyio.run(first_only)
    recorded = {r.game_id for r in RunDir.open(tmp_path / "run").records()}
    assert set(group.games) <= recorded and len(recorded) < grid.seeds * 2  # stopped before the end
    rest = collect(grid, tmp_path / "rest", 2)
    assert encode_group(group) == encode_group(next(g for g in rest if g.group == group.group))


class _Recorded:
    """A model's backend that keeps every request it is sent, by game and seat."""

    def __init__(self, inner, role: str, sent: dict) -> None:
        self.inner, self.role, self.sent = inner, role, sent
        self.name, self.limiter, self.tokenizer = inner.name, inner.limiter, inner.tokenizer

    async def complete(self, request):
        from engine.backends import CALL_GAME

        game_id = int(CALL_GAME.get().split(";")[0].rsplit("-", 1)[1])
        chat = [("system", request.system)]
        for user, reply in request.history:
            chat += [("user", user), ("assistant", reply)]
        self.sent.setdefault((game_id, self.role), []).append([*chat, ("user", request.user)])
        return await self.inner.complete(request)


def test_the_prompt_is_the_chat_as_it_was_sent_with_chat_memory(tmp_path, monkeypatch):
    """Traveling Adventurers' agents keep their whole chat: each turn's messages are the requests the
    model was sent, earlier turns and all."""
    from engine.policies import PolicyFactory
    from engine.policies.llm import LLMPolicy

    sent: dict = {}

    class Recording(PolicyFactory):
        def make(self, name, role, seed, game):
            policy = super().make(name, role, seed, game)
            if isinstance(policy, LLMPolicy):
                policy.backend = _Recorded(policy.backend, role, sent)
            return policy

    monkeypatch.setenv(*next(iter(KEY.items())))
    grid = Grid(game="tsp", seeds=1, agents=[["openai:ibp_node", "openai:ibp_node"]])
    with server_process() as url:
        groups = collect(grid, tmp_path / "run", 2, factory=Recording(), models=BackendSettings(urls={"openai": url + "/v1"}))
    assert GAMES["tsp"].faces.prompter.chat_memory
    compared = 0
    for trajectory in groups[0].trajectories:
        requests = sent[trajectory.game_id, trajectory.role]
        assert len(requests) == len(trajectory.steps) > 2
        for step, request in zip(trajectory.steps, requests):
            assert [(m.role, m.content) for m in step.messages] == request
            compared += 1
    assert compared > 8


def test_a_groups_games_are_its_members_on_one_seed_and_condition():
    grid = Grid(game="chain", seeds=4, agents=[["noisy", "noisy"], ["one_piece", "noisy", "noisy"]],
                feedback=["none", "own"], group=3)
    ids = GroupIds(grid)
    assert ids.count == 2 * 2 * 4 and grid.total == ids.count * 3
    covered = []
    for number in range(ids.count):
        specs = list(grid.specs_for(ids.members(number)))
        assert [s.member for s in specs] == [0, 1, 2] and len({s.seed for s in specs}) == 1
        fields = [s.condition_fields() for s in specs]
        assert all(f.pop("member") == str(m) for m, f in enumerate(fields)) and all(f == fields[0] for f in fields)
        assert {ids.of(s.game_id) for s in specs} == {number}
        assert len({s.policy_seed for s in specs}) == 3 and specs[0].policy_seed == specs[0].seed
        covered += ids.members(number)
    assert sorted(covered) == list(range(grid.total))


def test_member_0_is_the_game_a_run_without_groups_plays():
    from tests.helpers import play

    plain = Grid(game="chain", seeds=3, agents=[["noisy", "noisy", "noisy"]])
    grouped = msgspec.structs.replace(plain, group=3)
    ids = GroupIds(grouped)
    redrawn = 0
    for i in range(3):
        first, second = (play(grouped.spec(game_id)) for game_id in ids.members(i)[:2])
        alone = play(plain.spec(i))
        assert (first.turn_log, first.scores) == (alone.turn_log, alone.scores)
        redrawn += (first.turn_log, first.scores) != (second.turn_log, second.scores)
    assert redrawn  # member 1's seats drew anew


def _members_differ(groups: list[Group]) -> bool:
    """Some seat of some group played other replies in another member."""
    return any(len({tuple(s.reply for s in t.steps) for t in g.seat(role)}) > 1
               for g in groups for role in {t.role for t in g.trajectories})


def test_a_group_over_channels_that_cut_messages_keeps_what_each_partner_received(tmp_path, monkeypatch):
    """Every message goes through a channel of 16 words: each step keeps the message as each partner
    received it (its first 16 words), the partners' prompts show that and never the whole message,
    and the members of a group are still other samples of the game."""
    monkeypatch.setenv(*next(iter(KEY.items())))
    grid = Grid(game="chain", seeds=2, agents=[["openai:noisy", "openai:noisy", "noisy"]], params={"size": [4]},
                channel=[ChannelSpec(max_tokens=16)])
    with server_process() as url:
        groups = collect(grid, tmp_path / "run", 3, models=BackendSettings(urls={"openai": url + "/v1"}))
    assert len(groups) == 2 and _members_differ(groups)
    cut = shown = 0
    for group in groups:
        for trajectory in group.trajectories:
            game = [t for t in group.trajectories if t.game_id == trajectory.game_id]
            for step in (s for s in trajectory.steps if s.message):
                short = " ".join(step.message.split()[:16])
                assert step.delivered == {t.role: short for t in game if t.role != trajectory.role}
                if short == step.message:
                    continue
                cut += 1
                for partner in (t for t in game if t.role != trajectory.role and t.model is not None):
                    later = [m.content for s in partner.steps if s.turn >= step.turn for m in s.messages if m.role == "user"]
                    assert not any(step.message in text for text in later)
                    shown += any(short in text for text in later)
    assert cut > 10 and shown > 10


def test_a_shared_response_cache_keeps_each_members_own_sample(tmp_path, monkeypatch):
    """Two rollouts through one response cache: in the first, the members of a group still differ and
    no call of member k is answered from another member's entry (no hit at all); the second is
    answered wholly from the cache, each member from its own entries, and gives the same groups."""
    monkeypatch.setenv(*next(iter(KEY.items())))
    grid = Grid(game="chain", seeds=2, agents=[["openai:noisy", "openai:noisy", "noisy"]], params={"size": [4]})

    def counts(run: Path) -> dict:
        model = json.loads((run / "usage.json").read_text())["models"]["openai:noisy"]
        return {"calls": model["calls"], "hits": model["cache_hits"]}

    with server_process() as url:
        models = BackendSettings(urls={"openai": url + "/v1"}, cache=CacheSettings(mode="on", directory=str(tmp_path / "cache")))
        first, again = (collect(grid, tmp_path / name, 3, models=models) for name in ("first", "again"))
    assert _members_differ(first)
    made = counts(tmp_path / "first")
    assert made["calls"] > 2 * 3 * 2 and made["hits"] == 0
    assert counts(tmp_path / "again") == {"calls": 0, "hits": made["calls"]}
    assert [encode_group(g) for g in again] == [encode_group(g) for g in first]
