"""The chain puzzle: AsymPuzl for 2 to 4 agents, each holding one link of a chain of attributes
(Alice: position -> shape, Bob: shape -> color, Carol: color -> pattern, Dave: pattern -> material).

The game itself is ``GAME`` in ``game.py``; the registry (``puzzles.registry``) loads it when it is
first played, so that a run imports only the games it plays."""
