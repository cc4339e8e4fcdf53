"""A third agent, added in code: Carol joins Alice and Bob.

    .venv/bin/python examples/third_agent.py

A role is data. In the chain game each agent holds one link (Alice: position -> shape, Bob: shape ->
color, Carol: color -> pattern), so no two of them can solve it without the third; its rosters are
two, three or four agents, and a plan names one policy per role. The topology says who may talk to
whom: here a chain, Alice - Bob - Carol, so Bob must relay between the other two. Carol's policy is
written from scratch below against the game's view (``ChainView``: size, attributes, clues,
hypothesis); Alice and Bob use the built-in share_everything.
"""

import re
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import Grid, PolicyFactory, run_games, summarize  # noqa: E402
from puzzles import Answer  # noqa: E402
from puzzles.chain.prompt import format_reply  # noqa: E402
from puzzles.chain.rules import ChainReplace  # noqa: E402

LINK = re.compile(r"(position|shape|color|pattern) (\w+) -> (shape|color|pattern) (\w+)")


class Carol:
    """Shares her color -> pattern pairs and everything she has heard; writes every position whose
    shape, color and pattern she can chain together."""

    def __init__(self) -> None:
        self.links: dict[tuple[str, str], tuple[str, str]] = {}

    async def reply(self, context) -> Answer:
        view = context.view
        assert view.attributes == ("shape", "color", "pattern")
        for _, color, pattern in view.clues:  # her clues: (None, color, pattern) items
            self.links[("color", color)] = ("pattern", pattern)
        for line in context.conversation:
            for a, v, b, w in LINK.findall(line.text.lower()):
                self.links.setdefault((a, v), (b, w))
        actions = []
        for position in range(1, view.size + 1):
            values, key = [], ("position", str(position))
            while key in self.links and len(values) < 3:
                key = self.links[key]
                values.append(key[1])
            if len(values) == 3 and tuple(view.hypothesis[position - 1]) != tuple(values):
                actions.append(ChainReplace(position, tuple(values)))
        message = "; ".join(f"{a} {v} -> {b} {w}" for (a, v), (b, w) in self.links.items())
        return Answer(format_reply("Sharing what I know.", message, actions))


async def main() -> None:
    for topology in ("all", "chain"):
        plan = Grid(
            game="chain", seeds=100, params={"size": [6]}, topology=[topology],
            agents=[["share_everything", "share_everything", "carol"]],
        )
        records = []
        await run_games(plan.specs_for(range(plan.total)), factory=PolicyFactory(own={"carol": Carol}), concurrency=50, on_record=records.append)
        s = summarize(records)[0]
        print(f"topology={topology}: success {100 * s.success_rate:.0f}% over {s.games} games, "
              f"solved at round {s.mean_solved_turn:.1f} on average")


if __name__ == "__main__":
    anyio.run(main)
