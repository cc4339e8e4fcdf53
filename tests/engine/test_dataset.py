"""Training data from teachers' play, for every game: each sample is the chat the engine sends a model
in that seat and the reply played, which the game's reader reads back to the actions the game
applied; training and held-out games never start alike; the folder is written whole or not at all;
it loads as JSON lines always, and with Hugging Face ``datasets`` where that is installed."""

import json
import subprocess
import sys
from pathlib import Path

import anyio
import msgspec
import pytest

from bus import Act
from engine.dataset import DatasetError, DatasetPlan, Part, build, checked, read_dataset, seeds, write_dataset
from engine.plan import game_seed
from puzzles import GAMES, TurnContext, get_game

ROOT = Path(__file__).resolve().parents[2]


def small(game: str, **params) -> DatasetPlan:
    g = get_game(game)
    return DatasetPlan(
        game=game, parts=[Part(g.rules.Params(**params), 4)], holdout=3,
        demonstrations=3 if g.rules.demonstrations is not None else 0,
    )


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASYMGAMES_CACHE", str(tmp_path / "cache"))


def _json(value):
    return json.loads(msgspec.json.encode(value))


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_sample_reads_back_to_the_actions_played(game, tmp_path):
    plan = small(game)
    built = anyio.run(build, plan)
    write_dataset(tmp_path / "d", plan, built)
    card, samples, infos = read_dataset(tmp_path / "d")
    prompter = get_game(game).faces.prompter
    assert card["counts"]["samples"] == len(samples) > 0
    for sample, info in zip(samples, infos):
        roles = [m["role"] for m in sample.messages]
        assert roles[0] == "system" and roles[-1] == "assistant"
        assert roles[1:] == ["user", "assistant"] * ((len(roles) - 1) // 2)
        read = prompter.read(sample.messages[0]["content"], sample.messages[-2]["content"])
        assert read is not None, "the prompt is not the game's"
        context, _ = read
        assert context.role == info.role
        assert _json(list(prompter.parse(sample.messages[-1]["content"], context).actions)) == _json(info.actions)


def test_a_seat_that_keeps_its_chat_is_sent_its_earlier_turns_as_played():
    game = next(name for name, g in sorted(GAMES.items()) if g.faces.prompter.chat_memory)
    built = anyio.run(build, small(game))
    by_seat: dict = {}
    for sample, info in zip(built.samples, built.infos):
        earlier = by_seat.setdefault((info.trajectory, info.role), [])
        assert [m["content"] for m in sample.messages[2:-2:2]] == earlier
        earlier.append(sample.messages[-1]["content"])
    assert any(len(v) > 1 for v in by_seat.values())


def test_the_einstein_datasets_reasoning_follows_the_prompt():
    for cot in (True, False):
        built = anyio.run(build, small("einstein", cot=cot))
        replies = [s.messages[-1]["content"] for s in built.samples]
        assert all(r.startswith("<THINK>") == cot and r.endswith("</ACTION>") for r in replies)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_training_and_held_out_games_are_disjoint_by_construction(game):
    plan = small(game)
    g = get_game(game)
    train, held = seeds(g, plan, plan.parts[0])
    assert held == [game_seed(0, i) for i in range(3)]
    assert not set(train) & set(held) and len(set(train)) == len(train) == 4
    roles = g.rules.rosters[0]
    turns = g.rules.default_max_turns(plan.parts[0].params, roles)

    def start(seed):
        state = g.rules.new(plan.parts[0].params, seed, roles, turns)
        return msgspec.json.encode([state.view(r) for r in roles])

    assert not {start(s) for s in train} & {start(s) for s in held}


def test_parameters_that_make_few_distinct_games_refuse_more_training_games_than_are_left():
    # the paper's house has few distinct coin layouts: 100 held-out games cover them all
    tsp = get_game("tsp")
    few = DatasetPlan(game="tsp", parts=[Part(tsp.rules.Params(), 100)], holdout=100)
    with pytest.raises(DatasetError, match="only 0 games of these parameters start unlike the 100 held out"):
        seeds(tsp, few, few.parts[0])


def test_the_card_names_the_game_its_seeds_and_the_held_out_seeds(tmp_path):
    plan = small("einstein")
    card = write_dataset(tmp_path / "d", plan, anyio.run(build, plan))
    on_disk = json.loads((tmp_path / "d" / "card.json").read_text())
    assert on_disk == _json(card)
    assert card["game"] == "einstein" and card["parts"][0]["params"]["blocks"] == 4
    assert card["held_out"]["run_seed"] == 0 and card["parts"][0]["held_out"]["seeds"] == [game_seed(0, i) for i in range(3)]
    assert len(card["parts"][0]["training"]) == 4 and card["project_version"]
    assert "first 3 games of run seed 0" in (tmp_path / "d" / "README.md").read_text()


def test_a_reply_that_does_not_read_back_to_what_was_played_is_refused():
    game = get_game("einstein")
    plan = small("einstein")
    built = anyio.run(build, plan)
    sample, info = built.samples[0], built.infos[0]
    context, _ = game.faces.prompter.read(sample.messages[0]["content"], sample.messages[1]["content"])
    text = sample.messages[-1]["content"]
    actions = game.faces.prompter.parse(text, context).actions
    act = Act(game_id=0, turn=1, role=info.role, message="", actions=actions, reply=text)
    assert _json(checked(game, text, context, act, "here")) == _json(info.actions)
    other = game.faces.prompter.parse("<ACTION>pass</ACTION>", context).actions
    with pytest.raises(DatasetError, match="does not read back"):
        checked(game, text, context, Act(game_id=0, turn=1, role=info.role, message="", actions=other, reply=text), "here")
    with pytest.raises(DatasetError, match="could not be read"):
        checked(game, text, context, Act(game_id=0, turn=1, role=info.role, message="", format_error="no", reply=text), "here")
    assert isinstance(context, TurnContext)


def test_an_existing_folder_is_never_overwritten(tmp_path):
    plan = small("asympuzl")
    built = anyio.run(build, plan)
    (tmp_path / "d").mkdir()
    with pytest.raises(DatasetError, match="exists"):
        write_dataset(tmp_path / "d", plan, built)


def test_a_write_that_runs_out_of_room_leaves_nothing_that_looks_whole(tmp_path):
    """The file size limit (RLIMIT_FSIZE) stops the write as a full disk does (EFBIG, ENOSPC)."""
    script = f"""
import resource, signal, sys, anyio
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
from engine.dataset import DatasetError, DatasetPlan, Part, build, write_dataset
from puzzles import get_game
plan = DatasetPlan(game="einstein", parts=[Part(get_game("einstein").rules.Params(), 4)], holdout=3, demonstrations=3)
built = anyio.run(build, plan)
resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
try:
    write_dataset({str(tmp_path / "d")!r}, plan, built)
except DatasetError as exc:
    print(exc)
    sys.exit(3)
"""
    env = {"PYTHONPATH": str(ROOT), "ASYMGAMES_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stdout.count("\n") == 1 and "cannot write" in done.stdout and "nothing was left" in done.stdout
    assert list(tmp_path.glob("*d*")) == []


def test_a_killed_write_leaves_only_a_partial_folder(tmp_path):
    """SIGKILL mid-write: the target never appears; what is left is named as partial."""
    script = f"""
import os, signal, anyio
from engine.dataset import files
from engine.dataset import DatasetPlan, Part, build, write_dataset
from puzzles import get_game
plan = DatasetPlan(game="einstein", parts=[Part(get_game("einstein").rules.Params(), 4)], holdout=3, demonstrations=3)
built = anyio.run(build, plan)
real = os.fsync
def killed(fd):
    real(fd)
    os.kill(os.getpid(), signal.SIGKILL)
files.os.fsync = killed
write_dataset({str(tmp_path / "d")!r}, plan, built)
"""
    env = {"PYTHONPATH": str(ROOT), "ASYMGAMES_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == -9
    assert not (tmp_path / "d").exists()
    assert [p.name.startswith(".d.partial-") for p in tmp_path.iterdir() if p.name != "cache"] == [True]
    with pytest.raises(DatasetError, match="not a dataset"):
        read_dataset(next(tmp_path.glob(".d.partial-*")))


def test_a_dataset_of_another_version_of_the_game_is_refused(tmp_path):
    plan = small("einstein")
    write_dataset(tmp_path / "d", plan, anyio.run(build, plan))
    card = json.loads((tmp_path / "d" / "card.json").read_text())
    card["game_results_format"] = 1
    (tmp_path / "d" / "card.json").write_text(json.dumps(card))
    with pytest.raises(DatasetError, match="records of version 1.*make it again"):
        read_dataset(tmp_path / "d")


def test_the_samples_load_as_json_lines(tmp_path):
    plan = small("einstein")
    write_dataset(tmp_path / "d", plan, anyio.run(build, plan))
    lines = (tmp_path / "d" / "train.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert all(list(row) == ["messages"] for row in rows)
    assert all(set(m) == {"role", "content"} and isinstance(m["content"], str) for row in rows for m in row["messages"])


def test_the_samples_load_with_hugging_face_datasets(tmp_path):
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed (the train extra)")
    plan = small("einstein")
    write_dataset(tmp_path / "d", plan, anyio.run(build, plan))
    loaded = datasets.load_dataset("json", data_files=str(tmp_path / "d" / "train.jsonl"), split="train")
    assert loaded.column_names == ["messages"] and len(loaded) == len(anyio.run(build, plan).samples)
    assert loaded[0]["messages"][-1]["role"] == "assistant"


def test_the_command_writes_a_dataset_and_says_what_it_wrote(tmp_path):
    out = tmp_path / "d"
    argv = ["--game", "einstein", "--demonstrations", "2", "--part", "blocks=4:3", "--part", "blocks=5:3", "--sample", "8",
            "--holdout", "5", "--actions", "ask", "--cot", "no", "--out", str(out)]
    done = subprocess.run([sys.executable, "-m", "asymgames", "dataset", *argv], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "ASYMGAMES_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0, done.stderr
    card, samples, infos = read_dataset(out)
    assert f"{len(samples)} samples from 8 trajectories" in done.stdout
    assert [p["params"]["blocks"] for p in card["parts"]] == [4, 5]
    assert {p["params"]["actions"] for p in card["parts"]} == {"ask"}
    bad = subprocess.run([sys.executable, "-m", "asymgames", "dataset", "--game", "einstein", "--part", "blocks=9:3", "--out", str(tmp_path / "e")],
                         capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "blocks must be an integer from 4 to 8" in bad.stderr
