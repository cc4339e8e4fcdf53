"""The Einstein puzzle on a tabletop (Peng, Ma et al., arXiv 2510.25595): two players sort N blocks
into four destination bins, each knowing only some of the constraints that fix the layout; they move,
share a constraint, ask about a block or pass, one action per step, 30 steps in all.

The game itself is ``GAME`` in ``game.py``; the registry (``puzzles.registry``) loads it when it is
first played, so that a run imports only the games it plays."""
