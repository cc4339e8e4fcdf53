"""The run viewer: ``python -m runners.view RUN_DIR`` writes one self-contained HTML page of a run
(``page``), or serves it live on 127.0.0.1 (``serve``): the summary and conditions, every game in a
list with filters, and each game turn by turn as ``detail`` builds it (the terminal replay,
``runners.replay``, draws from the same data)."""
