"""Token-exact trajectories against a real server: games played with ``--tokens`` through llama.cpp's
``llama-server`` with SmolLM2-135M (``asymgames setup-llamacpp``), started by the engine; every model
turn's trajectory checked against the server's own tokenizer. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_token_trajectories.py                  # 1,000 turns
    .venv/bin/python benchmarks/bench_token_trajectories.py --turns 10000 --slots 8

Games of each game named (``--game``, default AsymPuzl of size 3 and TSP on generated boards of 4
rooms, whose agents keep their chat) are played, ``--slots`` at once, until ``--turns`` model turns
are checked (or ``--minutes`` pass). For each seat of each game its turns become one trajectory (``seat_trajectory``, the
chat's turns joined where each prompt begins with the sequence so far); for each turn the ids the
trajectory gives as the turn's prompt (its sequence up to the turn's completion) are compared with
the server's ``/tokenize`` (with special tokens, as its chat endpoint tokenizes) of its
``/apply-template`` of the messages the engine sent (the system prompt, the seat's earlier prompts and
replies where it keeps its chat, the turn's prompt, read back from the full transcript). Printed: the
turns checked, the turns whose ids differ (``mismatched_turns``, the target 0), the trajectory's own
reports of a prompt that does not begin with the chat so far (``chat_breaks``), the sequences and
the tokens in them, and the seats' generated share of the tokens (the loss mask's ones).

With ``--ledger FILE`` each checked game's counts are appended to FILE as one JSON line as it is
checked, so an interrupted run (Ctrl-C, a kill, the machine's end) loses at most the games in play:
run the same command again and it adds the ledger's counts to its own and plays only the games the
ledger lacks, until the total reaches ``--turns``. A ledger made with other settings is refused.

    .venv/bin/python benchmarks/bench_token_trajectories.py --turns 10000 --slots 4 --max-tokens 16 --ledger tokens.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import PolicyFactory  # noqa: E402
from engine.backends import BackendSettings, ModelOptions, Tokens, seat_trajectory, turn_prompt_ids  # noqa: E402
from engine.plan.grid import Grid  # noqa: E402
from engine.play.run import run_games  # noqa: E402
from engine.records.transcribe import TranscriptMaker  # noqa: E402
from engine.records.transcripts import Transcript  # noqa: E402
from engine.serving import ServedModel, Servers  # noqa: E402
from engine.serving.install import bundled_model  # noqa: E402
from puzzles import GAMES  # noqa: E402

NAME = "llamacpp:smollm2"
PARAMS: dict[str, dict[str, list[Any]]] = {"asympuzl": {"size": [3]}, "chain": {"size": [3]}, "tsp": {"board": ["generated"], "rooms": [4]},
          "einstein": {"blocks": [4]}}
_decode = msgspec.json.Decoder(Transcript).decode


class Checker:
    """Checks each finished game's turns against the server's tokenizer; keeps the counts."""

    def __init__(self, base: str, session: Any, counts: Counter[str] | None = None) -> None:
        self.base, self.session = base, session
        self.counts: Counter[str] = counts if counts is not None else Counter()
        self.examples: list[dict] = []
        self.failure: str | None = None  # the last check the server could not answer
        self.earlier_turns = self.counts["turns"]  # checked by earlier runs of the ledger

    async def server_ids(self, messages: list[dict]) -> list[int]:
        async with self.session.post(self.base + "/apply-template", json={"messages": messages}) as response:
            prompt = (await response.json())["prompt"]
        async with self.session.post(self.base + "/tokenize", json={"content": prompt, "add_special": True, "parse_special": True}) as response:
            return (await response.json())["tokens"]

    async def check(self, transcript: Transcript) -> Counter[str]:
        """The game's counts, added to the run's once every turn is checked."""
        counts: Counter[str] = Counter()
        chat = GAMES[transcript.spec.game].faces.prompter.chat_memory
        seats: dict[str, list[Any]] = {}
        for turn in transcript.turns:
            if isinstance(turn.tokens, Tokens):
                seats.setdefault(turn.role, []).append(turn)
        for role, turns in seats.items():
            trajectory = seat_trajectory([turn.tokens for turn in turns], chat=chat)
            counts["chat_breaks"] += len(trajectory.mismatches)
            counts["sequences"] += len(trajectory.sequences)
            counts["tokens"] += sum(len(s.ids) for s in trajectory.sequences)
            counts["generated"] += sum(sum(s.mask) for s in trajectory.sequences)
            earlier: list[dict] = []
            for number, turn in enumerate(turns):
                prompt = turn.prompt
                messages = [{"role": "system", "content": prompt["system"]}, *earlier, {"role": "user", "content": prompt["user"]}]
                if chat:
                    earlier += [{"role": "user", "content": prompt["user"]}, {"role": "assistant", "content": turn.reply}]
                expected = await self.server_ids(messages)
                given = list(turn_prompt_ids(trajectory, number))
                counts["turns"] += 1
                counts[f"turns_{transcript.spec.game}"] += 1
                if given != expected:
                    counts["mismatched_turns"] += 1
                    if len(self.examples) < 5:
                        at = next((i for i, (a, b) in enumerate(zip(given, expected)) if a != b), min(len(given), len(expected)))
                        self.examples.append({"game": transcript.game_id, "role": role, "turn": number, "at": at,
                                              "given": given[at:at + 8], "server": expected[at:at + 8]})
        self.counts.update(counts)
        return counts


class Ledger:
    """The games checked so far, one JSON line each after a line of the settings; appended as each game is checked."""

    def __init__(self, path: Path, settings: dict) -> None:
        self.path = path
        self.counts: Counter[str] = Counter()
        self.examples: list[dict] = []
        self.done: set[int] = set()
        text = path.read_text() if path.is_file() else ""
        lines = text.splitlines()
        if lines:
            try:
                kept = json.loads(lines[0])
            except json.JSONDecodeError:
                sys.exit(f"{path} is not a ledger of this benchmark (its first line is not JSON)")
            if kept != {"settings": settings}:
                sys.exit(f"{path} was made with other settings: {lines[0]}; this run's: {json.dumps(settings)}")
        for line in lines[1:]:
            try:
                game = json.loads(line)
            except json.JSONDecodeError:  # the last line, cut where a run was killed: its game is played again
                continue
            self.done.add(game["game_id"])
            self.counts.update(game["counts"])
            self.examples += game["examples"]
        with path.open("a") as file:
            if not lines:
                file.write(json.dumps({"settings": settings}) + "\n")
            elif not text.endswith("\n"):
                file.write("\n")  # a cut last line stays alone on its line

    def add(self, game_id: int, counts: Counter[str], examples: list[dict], error: str | None = None) -> None:
        line = {"game_id": game_id, "counts": dict(counts), "examples": examples, **({"error": error} if error else {})}
        with self.path.open("a") as file:
            file.write(json.dumps(line) + "\n")


def _settings(args) -> dict:
    """What decides the games a run plays and the replies it samples: a ledger holds one set of them."""
    return {key: getattr(args, key) for key in ("game", "seed", "max_turns", "max_tokens", "temperature", "model_seed",
                                                 "structured", "context")}


async def main_async(args) -> None:
    model = bundled_model("smollm2")
    if model is None or not model.is_file():
        sys.exit("no model: asymgames setup-llamacpp")
    log_dir = Path(tempfile.mkdtemp(prefix="bench-tokens-"))
    options = ModelOptions(max_tokens=args.max_tokens, structured=args.structured, tokens=True, temperature=args.temperature,
                           seed=args.model_seed, timeout=900.0)
    started = time.monotonic()
    made: list[Checker] = []  # the checker, once the server is up: its counts are printed however the run ends
    try:
        ledger = Ledger(args.ledger, _settings(args)) if args.ledger else None  # refused before the server starts
        await _play_and_check(args, model, options, log_dir, made, ledger)
    finally:
        if made:
            _report(made[0], args, started, log_dir)


async def _play_and_check(args, model: Path, options: ModelOptions, log_dir: Path, made: list, ledger: Ledger | None) -> None:
    import aiohttp

    started = time.monotonic()
    async with Servers({NAME: ServedModel("llamacpp", str(model))}, log_dir, slots=args.slots, context=args.context) as urls:
        url = urls[NAME]
        factory = PolicyFactory(BackendSettings(options=options, serve_slots=args.slots))
        factory.hub.served_urls[NAME] = url  # the running server: the engine's path for a server it started
        maker = TranscriptMaker(full=True)
        async with aiohttp.ClientSession() as session, factory:
            checker = Checker(url.removesuffix("/v1"), session, Counter(ledger.counts) if ledger else None)
            if ledger:
                checker.examples += ledger.examples
            made.append(checker)
            finished: list[int] = []
            errored: dict[int, str] = {}  # the games that ended in an error: what it said
            done = anyio.Event()

            def on_record(record) -> None:
                finished.append(record.game_id)
                if record.error:
                    checker.counts["games_in_error"] += 1
                    errored[record.game_id] = f"{record.error.kind} {record.error.type}: {record.error.message}"[:300]

            async def play(game: str, seed: int, first: int) -> None:
                plan = Grid(game=game, seeds=first + 100_000, seed=seed, agents=[[NAME, NAME]], params=PARAMS.get(game, {}),
                            max_turns=[args.max_turns])
                with anyio.CancelScope() as scope:
                    async def stop_when_done() -> None:
                        await done.wait()
                        scope.cancel()

                    async with anyio.create_task_group() as group:
                        group.start_soon(stop_when_done)
                        # each game's ids its own (from ``first`` on): the transcripts are kept by game id
                        specs = (spec for spec in plan.specs_for(range(first, plan.total)) if not (ledger and spec.game_id in ledger.done))
                        await run_games(specs, factory=factory, concurrency=args.slots,
                                        on_record=on_record, observers=[maker])
                        group.cancel_scope.cancel()

            async def check_finished() -> None:
                while not done.is_set():
                    while finished:
                        game_id = finished.pop(0)
                        line = maker.take(game_id)
                        if line is not None:
                            examples = len(checker.examples)
                            try:
                                counts = await checker.check(_decode(line))
                            except (aiohttp.ClientError, OSError) as exc:  # the server went away mid-check: say so, go on
                                checker.counts["checks_failed"] += 1
                                checker.failure = f"{type(exc).__name__}: {exc}"
                                continue
                            checker.counts["games"] += 1
                            if ledger:
                                ledger.add(game_id, counts + Counter(games=1, games_in_error=int(game_id in errored)), checker.examples[examples:],
                                           errored.get(game_id))
                    if checker.counts["turns"] >= args.turns or time.monotonic() - started > args.minutes * 60:
                        done.set()
                        return
                    c = checker.counts
                    print(f"\r{c['games']} games, {c['turns']} turns checked, {c['mismatched_turns']} mismatched, "
                          f"{c['chat_breaks']} chat breaks", end="", file=sys.stderr, flush=True)
                    await anyio.sleep(0.5)

            async with anyio.create_task_group() as group:
                group.start_soon(check_finished)
                for number, game in enumerate(args.game):
                    group.start_soon(play, game, args.seed + number, number * 100_000)


def _report(checker: Checker, args, started: float, log_dir: Path) -> None:
    counts = checker.counts
    wall = time.monotonic() - started
    print(file=sys.stderr)
    print(json.dumps({"turns": counts["turns"], "mismatched_turns": counts["mismatched_turns"], "chat_breaks": counts["chat_breaks"],
                      "games": counts["games"], "games_in_error": counts["games_in_error"],
                      "turns_by_game": {g: counts[f"turns_{g}"] for g in args.game},
                      "sequences": counts["sequences"], "tokens": counts["tokens"],
                      "generated_share": round(counts["generated"] / counts["tokens"], 3) if counts["tokens"] else None,
                      "checks_failed": counts["checks_failed"], "last_failure": checker.failure,
                      "seconds": round(wall), "turns_of_earlier_runs": checker.earlier_turns, "ledger": args.ledger and str(args.ledger),
                      "examples": checker.examples}))
    print(f"{counts['mismatched_turns']} of {counts['turns']} turns' prompt ids differ from the server's /tokenize of the "
          f"rendered prompt (target 0); {counts['chat_breaks']} chat breaks; server log in {log_dir}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000, help="model turns to check (default 1000)")
    parser.add_argument("--minutes", type=float, default=float("inf"), help="stop after this long, with the turns checked by then")
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="games to play (default asympuzl and tsp)")
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--context", type=int, default=4096, help="tokens of context per slot")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--temperature", type=float, default=0.7, help="sampled replies: tokens a greedy model would not pick")
    parser.add_argument("--model-seed", type=int, default=1)
    parser.add_argument("--structured", action="store_true", help="replies held to the game's schema or grammar")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ledger", type=Path, help="a file the checked games' counts are appended to; a run with the same settings goes on from it")
    args = parser.parse_args()
    args.game = args.game or ["asympuzl", "tsp"]
    anyio.run(main_async, args)


if __name__ == "__main__":
    main()
