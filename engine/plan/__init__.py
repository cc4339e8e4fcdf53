"""The plan of a run: one game's spec (``spec``) and the grid of conditions a run plays (``grid``)."""
