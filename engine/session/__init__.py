"""A run session: a plan and a run directory become records on disk (``playing``), opening a new or
resumed run directory (``opening``), giving up on a run that cannot work (``giveup``), and stopping
game starts (``stopping``)."""
