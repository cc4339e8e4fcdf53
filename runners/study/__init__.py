"""``asymgames study STUDY.toml``: a study served to many people at once (``engine.study`` is its plain
part: the file, the design, the journal).

- ``cli``: the command, the study's directory, the model settings;
- ``host``: participants, the waiting room, the games started and ended, leaving, a restart;
- ``games``: a block's run directory and one game with its people seated;
- ``front``: a participant's page (a seat's front end, and the screens between games);
- ``server``, ``guard``: the web side (one link, a page per participant, Host/Origin, join limits);
- ``admin``: live status and ``participants.csv``.
"""
