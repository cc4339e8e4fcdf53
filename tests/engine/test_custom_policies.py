"""A policy of the user's own named on the command line (``package.module:Class``), in a run, a sweep
and their resumes; a name that cannot be imported or is not a policy is one line and status 2; one
that returns the text alone still plays, and what an ``Answer`` says of the call reaches the record
and the transcript."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from bus import Usage
from engine import Grid, PolicyFactory, RunDir, play_game
from engine.policies.factory import TextPolicy, is_import, is_model
from engine.records.transcribe import TranscriptMaker
from examples.custom_policy import HalfSharer
from puzzles import GAMES, Answer
from puzzles.asympuzl.scripted import ShareEverything
from runners.concurrent import main as run_main
from runners.sweep import main as sweep_main

ROOT = Path(__file__).resolve().parents[2]
HALF = "examples.custom_policy:HalfSharer"
HERE = "tests.engine.test_custom_policies"


class TextOnly(HalfSharer):
    """HalfSharer written as policies were before ``Answer``: its reply is the text alone."""

    async def reply(self, context):
        return (await super().reply(context)).text


class Metered(ShareEverything):
    """share_everything, saying what a model call of its own would have cost and what it sent."""

    async def reply(self, context):
        text = (await super().reply(context)).text
        usage = Usage(model="mine:tiny", prompt_tokens=100 + context.turn, completion_tokens=7, latency=0.5)
        return Answer(text, usage=usage, prompt={"system": "mine", "user": f"turn {context.turn}"})


async def test_a_policy_of_one_s_own_that_returns_the_text_alone_still_plays():
    factory = PolicyFactory()
    plans = {name: Grid(seeds=6, params={"size": [6]}, agents=[[name, "share_everything"]]) for name in (f"{HERE}:TextOnly", HALF)}
    records = {name: [await play_game(plan.spec(i), factory) for i in range(6)] for name, plan in plans.items()}
    old, new = records.values()
    assert [r.error for r in old] == [None] * 6
    assert [(r.outcome, r.turn_log) for r in old] == [(r.outcome, r.turn_log) for r in new]
    assert isinstance(factory.make(f"{HERE}:TextOnly", "alice", 1, GAMES["asympuzl"]), TextPolicy)


async def test_the_usage_and_prompt_of_an_answer_reach_the_record_and_the_transcript():
    spec = Grid(seeds=1, params={"size": [4]}, agents=[[f"{HERE}:Metered", "share_everything"]]).spec(0)
    maker = TranscriptMaker(full=True)
    record = await play_game(spec, PolicyFactory(), taps=[maker.game_started(spec)])
    maker.game_finished(spec, record)
    transcript = msgspec.json.decode(maker.take(spec.game_id))
    assert record.outcome == "success" and record.turns == 2
    alice = [t for t in record.turn_log if t.role == "alice"]
    assert [t.usage for t in alice] == [
        Usage(model="mine:tiny", prompt_tokens=100 + t.turn, completion_tokens=7, latency=0.5) for t in alice
    ]
    assert {t.usage for t in record.turn_log if t.role == "bob"} == {msgspec.UNSET}
    totals = record.usage["alice"]
    assert (totals.calls, totals.completion_tokens, totals.latency) == (2, 14, 1.0) and "bob" not in record.usage
    turns = transcript["turns"]
    assert [t["prompt"] for t in turns if t["role"] == "alice"] == [{"system": "mine", "user": f"turn {t.turn}"} for t in alice]
    assert [t["usage"]["prompt_tokens"] for t in turns if t["role"] == "alice"] == [100 + t.turn for t in alice]
    assert {t["prompt"] for t in turns if t["role"] == "bob"} == {None}


class Failing(ShareEverything):
    """A policy that fails when made (its key is missing, say)."""

    def __init__(self, role, rng):
        raise RuntimeError("no key for my model")


class Crashing(ShareEverything):
    """A policy made fine whose every reply raises."""

    async def reply(self, context):
        raise KeyError(f"turn {context.turn}")


@pytest.mark.parametrize("policy, message", [
    ("Failing", f"{HERE}:Failing failed when made for bob: RuntimeError: no key for my model"),
    ("NeedsThree", f"{HERE}:NeedsThree is not a policy"),
])
def test_a_policy_that_fails_when_made_is_one_line_and_status_2_before_any_game(tmp_path, capsys, policy, message):
    for runner, argv in ((run_main, ["--games", "50", "--agent", f"bob={HERE}:{policy}"]),
                         (run_main, ["--game", "chain", "--games", "50", "--agent", "alice=share_everything",
                                     "--agent", "bob=share_everything", "--agent", f"carol={HERE}:{policy}"])):
        with pytest.raises(SystemExit) as exit_info:
            runner([*argv, "--out", str(tmp_path / "r"), "--no-dashboard"])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message.replace("bob", argv[-1].split("=")[0]) in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "r").exists()


def test_a_policy_whose_every_turn_fails_stops_the_run_early_quoting_the_error(tmp_path, capsys):
    run = tmp_path / "r"
    code = run_main(["--games", "200", "--agent", f"bob={HERE}:Crashing", "--concurrency", "4", "--out", str(run), "--no-dashboard"])
    out = capsys.readouterr().out
    assert code == 3
    last = out.strip().splitlines()[-1]
    assert last.startswith("Stopped early: the first 20 games all ended in the same error: KeyError in bob: 'turn 1'. ")
    assert last.endswith(f"--resume {run} --concurrency 4 --no-dashboard --replay-errors")  # which plays them again
    records = RunDir.open(run).records()
    assert 20 <= len(records) < 200 and {r.error.kind for r in records} == {"actor_error"}


MINE = """\
from puzzles.asympuzl.scripted import ShareEverything

BUILT = []


class Mine(ShareEverything):
    def __init__(self, role, rng):
        BUILT.append(role)
        if {broken} and len(BUILT) > 1:  # made once to be checked, then fails in every game
            raise RuntimeError("no key for my model")
        super().__init__(role, rng)
"""


@pytest.mark.parametrize("broken_when", ["made", "replying"])
def test_a_run_stopped_early_by_a_failing_policy_plays_those_games_again_with_the_command_it_gives(tmp_path, broken_when):
    """A policy of one's own that passes the check before any game and then fails in every game (when
    made for it, or on its first turn): the run stops early; once the policy is fixed, the command the
    closing line gives, run as printed, plays the failed games again and the rest of the run."""
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "__init__.py").write_text("")
    module = tmp_path / "own" / "mine.py"
    broken = MINE.format(broken="True")
    if broken_when == "replying":
        broken = MINE.format(broken="False") + (
            "\n    async def reply(self, context):\n        raise KeyError(f'turn {context.turn}')\n")
    module.write_text(broken)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tmp_path), str(ROOT)))}
    run = tmp_path / "r"

    def play(argv: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    first = play(["-m", "runners.concurrent", "--games", "400", "--agent", "bob=own.mine:Mine", "--concurrency", "4",
                  "--no-dashboard", "--out", str(run)])
    assert first.returncode == 3, first.stdout[-2000:] + first.stderr[-2000:]
    last = first.stdout.strip().splitlines()[-1]
    assert last.startswith("Stopped early: the first 20 games all ended in the same error")
    command = shlex.split(last.split("continue with: ", 1)[1])
    failed = RunDir.open(run).records()
    assert 20 <= len(failed) < 400 and all(r.outcome == "error" for r in failed)

    module.write_text(MINE.format(broken="False"))  # fixed
    assert command[0] == "python"
    again = play(command[1:])
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert f"Playing again {len(failed)} games that ended in an error" in again.stdout
    played = RunDir.open(run).records()
    assert len(played) == 400 and {r.outcome for r in played} == {"success"}
    aside = [msgspec.json.decode(line) for line in (run / "results.replayed.jsonl").read_bytes().splitlines()]
    assert sorted(r["game_id"] for r in aside) == sorted(r.game_id for r in failed)


def test_the_forecast_of_a_resume_counts_the_games_replay_errors_plays_again(tmp_path, capsys):
    """``--resume RUN --replay-errors --dry-run``: the games that ended in an error not a player's are
    played again, so the forecast counts them among the games to play; it writes nothing."""
    run = tmp_path / "r"
    assert run_main(["--games", "200", "--agent", f"bob={HERE}:Crashing", "--concurrency", "4", "--out", str(run), "--no-dashboard"]) == 3
    failed = len(RunDir.open(run).records())
    assert 20 <= failed < 200
    results = (run / "results.jsonl").read_bytes()
    capsys.readouterr()
    for flags, games in (([], 200 - failed), (["--replay-errors"], 200)):
        with pytest.raises(SystemExit) as exit_info:
            run_main(["--resume", str(run), *flags, "--dry-run", "--no-dashboard"])
        assert exit_info.value.code == 0
        assert f"Forecast: {games} games, no model plays" in capsys.readouterr().out
    assert (run / "results.jsonl").read_bytes() == results and not (run / "results.replayed.jsonl").exists()


def test_replay_errors_is_refused_without_a_run_to_resume(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--games", "5", "--replay-errors", "--out", str(tmp_path / "r"), "--no-dashboard"])
    assert exit_info.value.code == 2 and "argument --replay-errors" in capsys.readouterr().err


def test_a_dotted_module_is_a_policy_and_an_endpoint_name_a_model():
    assert is_import(HALF) and not is_model(HALF)
    assert is_model("openrouter:meta-llama/llama-3.1-70b") and not is_import("openrouter:meta-llama/llama-3.1-70b")
    assert is_model("vllm:Qwen/Qwen2.5-7B") and not is_model("share_everything")


def test_a_run_plays_the_policy_saves_its_path_and_resumes_byte_identical(tmp_path):
    run = tmp_path / "run"
    assert run_main(["--games", "40", "--agent", f"alice={HALF}", "--out", str(run), "--no-dashboard"]) == 0
    assert RunDir.open(run).config().agents == [[HALF, "share_everything"]]
    records = RunDir.open(run).records()
    success = sum(r.outcome == "success" for r in records) / len(records)
    assert success < 0.5  # half the shapes are never told (share_everything alone solves every game)
    full = (run / "results.jsonl").read_bytes()
    lines = full.splitlines(keepends=True)
    (run / "results.jsonl").write_bytes(b"".join(lines[:25]))
    assert run_main(["--resume", str(run), "--no-dashboard"]) == 0
    assert (run / "results.jsonl").read_bytes() == full


def test_a_sweep_compares_the_policy_with_a_scripted_one(tmp_path):
    out = tmp_path / "run"
    assert sweep_main([str(ROOT / "examples" / "custom_policy.toml"), "--seeds", "30", "--out", str(out), "--no-dashboard"]) == 0
    rates = {}
    for record in RunDir.open(out).records():
        rates.setdefault(record.spec.agents["alice"], []).append(record.outcome == "success")
    assert set(rates) == {HALF, "share_everything"}
    assert sum(rates[HALF]) < sum(rates["share_everything"]) == 30


@pytest.mark.parametrize("policy, message", [
    ("examples.no_such_module:Policy", "cannot import examples.no_such_module for the policy"),
    ("examples.custom_policy:Nobody", "examples.custom_policy has no 'Nobody'"),
    ("examples.custom_policy:main", "examples.custom_policy:main is not a policy"),
    ("examples.custom_policy:Grid", "examples.custom_policy:Grid is not a policy"),
])
def test_a_policy_that_cannot_be_used_is_one_line_and_status_2(tmp_path, capsys, policy, message):
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--games", "2", "--agent", f"bob={policy}", "--out", str(tmp_path / "r")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "argument --agent" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_the_command_finds_a_policy_in_the_working_directory(tmp_path):
    """The command imports its own packages first, then still finds the user's modules."""
    (tmp_path / "engine.py").write_text("raise ImportError('the user engine')\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "__init__.py").write_text("")
    (tmp_path / "mine" / "quiet.py").write_text(
        "class Quiet:\n"
        "    def __init__(self, role, rng):\n"
        "        self.role = role\n"
        "    async def reply(self, context):\n"
        "        return '{\"message\": \"nothing to say\", \"actions\": []}'\n"
    )
    command = shutil.which("asymgames", path=str(Path(sys.executable).parent))
    assert command, "the asymgames command is not installed: pip install -e ."
    out = tmp_path / "run"
    done = subprocess.run(
        [command, "run", "--games", "3", "--agent", "alice=mine.quiet:Quiet", "--out", str(out), "--no-dashboard"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    records = RunDir.open(out).records()
    assert [r.outcome for r in records] == ["failure"] * 3
    assert {r.spec.agents["alice"] for r in records} == {"mine.quiet:Quiet"}


class BuiltBare:
    """A policy whose class takes no arguments, as one written for code (``examples/third_agent.py``'s Carol)."""

    def __init__(self) -> None:
        self.inner = ShareEverything("alice", None)

    async def reply(self, context):
        return await self.inner.reply(context)


class NeedsThree:
    def __init__(self, role, rng, extra) -> None:
        pass

    async def reply(self, context):
        return Answer("")


async def test_a_policy_class_is_built_with_role_and_rng_or_with_nothing_named_or_given_in_code():
    from examples.third_agent import Carol

    bare = f"{HERE}:BuiltBare"
    named = await play_game(Grid(seeds=1, params={"size": [4]}, agents=[[bare, "share_everything"]]).spec(0), PolicyFactory())
    given = await play_game(Grid(seeds=1, params={"size": [4]}, agents=[["mine", "share_everything"]]).spec(0),
                            PolicyFactory(own={"mine": BuiltBare}))
    assert named.error is None and given.error is None and named.outcome == given.outcome == "success"
    assert named.turn_log == given.turn_log
    chain = Grid(game="chain", seeds=1, params={"size": [4]}, agents=[["share_everything", "share_everything", "examples.third_agent:Carol"]])
    record = await play_game(chain.spec(0), PolicyFactory())
    assert record.error is None and record.outcome == "success"
    factory = PolicyFactory(own={"carol": Carol, "half": HalfSharer})
    assert factory.canonical("carol") == "carol" and factory.canonical("half") == "half"
    factory.check("half", GAMES["asympuzl"])
    assert isinstance(factory.make("half", "alice", 3, GAMES["asympuzl"]), TextPolicy)


def test_a_class_built_neither_way_is_refused_in_one_line():
    with pytest.raises(ValueError, match="NeedsThree is not a policy: .*built with \\(role, rng\\) or with nothing"):
        PolicyFactory().check(f"{HERE}:NeedsThree", GAMES["asympuzl"])
    with pytest.raises(ValueError, match="mine is not a policy"):
        PolicyFactory(own={"mine": NeedsThree})
