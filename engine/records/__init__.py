"""What a run writes: one game's record (``record``), the run directory (``rundir``), transcripts (made
by ``transcribe``, kept in gzip blocks by ``blocks``, read by ``transcripts``), reading older formats
(``upgrade``), compact sets of game ids (``ids``) and runs of one plan merged (``merging``)."""

from engine.records.blocks import GameLines
from engine.records.ids import IdSet
from engine.records.merging import merge_runs
from engine.records.record import INFRA_ERROR, ErrorInfo, GameRecord, is_infra_error
from engine.records.rundir import RESULTS_FILE, Plan, RunDir, RunDirError, StorageError, decode_any_record
from engine.records.transcribe import TranscriptWriter
from engine.records.transcripts import DETAIL_FULL, Transcript, TranscriptIndex, TranscriptTurn, full_transcripts, read_transcript

__all__ = [
    "DETAIL_FULL", "INFRA_ERROR", "RESULTS_FILE", "ErrorInfo", "GameLines", "GameRecord", "IdSet", "Plan", "RunDir", "RunDirError",
    "StorageError", "Transcript", "TranscriptIndex", "TranscriptTurn", "TranscriptWriter", "decode_any_record",
    "full_transcripts", "is_infra_error", "merge_runs", "read_transcript",
]
