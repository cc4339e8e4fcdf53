"""Traveling Adventurers: two players with private coins on every hallway of one house agree on a
round trip through every room that collects the most coins together (a max-TSP on the summed
weights, negotiated in free text). Roles: ``light`` (moves first) and ``ghost``.

The game itself is ``GAME`` in ``game.py``; the registry (``puzzles.registry``) loads it when it is
first played, so that a run imports only the games it plays."""
