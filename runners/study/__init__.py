"""``asymgames study STUDY.toml``: a study served to many people at once (``engine.study`` does the work:
the file, the design, the journal, the host that pairs people and plays and records their games).

- ``cli``: the command, the study's directory, the model settings;
- ``front``: a participant's page (a seat's front end that shows the host's screens between games);
- ``server``, ``guard``: the web side (one link, a page per participant, Host/Origin, join limits);
- ``admin``: live status and ``participants.csv``.
"""
