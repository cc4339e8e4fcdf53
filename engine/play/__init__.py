"""Playing games: one game as actors on a bus (``game``), many at once under a cap (``run``), the pacing
of game starts (``pacing``), the garbage collector set for many games (``collector``), the leak audit
(``audit``), and the same turn machine as a PettingZoo environment (``aec``)."""
