"""The command lines' flag groups, each with what turns it into settings: ``running`` (where a run
goes and how it plays, and the step to an open run session), ``game`` (a game's parameters, roles
and channels), ``models`` (how models are called), ``spending`` (forecast and caps), ``seats`` (a
person at this terminal)."""
