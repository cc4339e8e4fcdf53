"""Run games from Python with a policy of your own, and summarise them.

    .venv/bin/python examples/custom_policy.py

The same policy from the command line, named by its module path (from the project's root):

    asymgames run --agent alice=examples.custom_policy:HalfSharer --games 200
    asymgames sweep examples/custom_policy.toml

A policy named ``package.module:NAME`` on the command line, or given by name in code
(``PolicyFactory(own={"half": HalfSharer})``), is built as ``NAME(role, rng)`` (rng: a
``random.Random`` seeded from the game and the role), or as ``NAME()`` where its class takes no
arguments, and must give an object with ``async reply(context) -> Answer``.

A policy gets a TurnContext (its view of the game, feedback, the recent conversation) and returns an
``Answer`` (``puzzles.policy``) holding the raw reply text, in the game's reply format (for AsymPuzl:
text ending with {"message": ..., "actions": [...]}); a policy that calls a model of its own may add
the call's ``usage`` and ``prompt``, which go into the record and the transcript with the turn. (A
policy named on the command line may also return the text alone, a ``str``.) This one plays Alice
like share_everything but only ever tells Bob the first half of her shapes.
"""

import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import Grid, PolicyFactory, run_games, summarize  # noqa: E402
from puzzles import Answer  # noqa: E402
from puzzles.asympuzl.prompt import format_reply, parse_reply  # noqa: E402
from puzzles.asympuzl.scripted import ShareEverything  # noqa: E402


class HalfSharer(ShareEverything):
    async def reply(self, context) -> Answer:
        full = parse_reply((await super().reply(context)).text)
        shapes = [p.shape for p in context.view.clues]
        half = ", ".join(shapes[: len(shapes) // 2 + 1])
        return Answer(format_reply("Sharing only part.", f"My shapes in order: {half}.", full.actions))


async def main() -> None:
    plan = Grid(seeds=200, params={"size": [6]}, agents=[["half", "share_everything"]])
    records = []
    await run_games(plan.specs_for(range(plan.total)), factory=PolicyFactory(own={"half": HalfSharer}), concurrency=64, on_record=records.append)
    for s in summarize(records):
        print(f"{s.condition}\n  success {100 * s.success_rate:.1f}% "
              f"(95% CI {100 * s.ci_low:.1f}-{100 * s.ci_high:.1f}) over {s.games} games")


if __name__ == "__main__":
    anyio.run(main)
