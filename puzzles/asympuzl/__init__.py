"""AsymPuzl: Alice sees the correct shape at each position but not the colors; Bob sees the correct
shape-color pairs in a shuffled order. They exchange messages and edit their own working hypothesis
until both match the truth. With one agent ("solo") it is the papers' single-agent check: one agent
holds both views.

Which paper each default follows: the prompt is the long paper's appendix G (``prompt = "paper"``);
the turn limit 2N and the actions per position (modifications) are the long paper's; own_detailed
feedback is the short paper's default (the long paper has none); distractors are the short paper's.

The game itself is ``GAME`` in ``game.py``; the registry (``puzzles.registry``) loads it when it is
first played, so that a run imports only the games it plays."""
