"""What a run writes: one game's record (``record``), the run directory (``rundir``), transcripts,
reading older formats (``upgrade``) and compact sets of game ids (``ids``)."""
