"""What the two position games share, AsymPuzl (``puzzles.asympuzl``) and the chain puzzle
(``puzzles.chain``): in both, every role edits its own list of positions towards one truth.

- ``rules``: the state both games share (``PositionGame``), the feedback modes and how feedback
  reads, the record's position figures, how their condition labels sort, and how their older
  records read (``Format1``, ``position_upgrade``);
- ``prompt``: the prompt parts after appendix G of the long AsymPuzl paper, and reading a prompt back;
- ``replies``: reading a reply that ends in ``{"message": ..., "actions": [...]}``;
- ``replay``: ``PositionReplay``, the replay of a position game;
- ``seat``: ``PositionSeat``, what a person in a seat of a position game sees and the form they act through;
- ``vocab``: the word lists (shapes, colors, patterns, materials);
- ``analyses``: the strategy classes and failure signatures of the long paper's section 5.3, per
  condition and role (each game's ``Records.analyses``), read game by game by ``reading``.

Nothing here is imported when the package is: each game imports the modules it uses.
"""
