"""A person in a seat, at this terminal (``terminal``, reading lines through ``keyboard``) or in the
browser (``browser``, the pages of ``python -m runners.play``). Both are front ends of the policy
``human`` (``engine.policies.seat``); the game's side is ``puzzles.seat``."""
