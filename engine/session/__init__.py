"""A run session: a plan and a run directory become records on disk (``playing``), with the pacing of
game starts (``pacing``), giving up on a run that cannot work (``giveup``) and the garbage collector
set for many games (``collector``)."""
