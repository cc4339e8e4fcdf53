"""The batches a run sent (``batches.jsonl``) and their state at the provider, and the clean-up after a
run stopped for good (``asymgames batches``).

Each batch of the log is looked at through its provider's SDK, with the run's model settings
(``models.json``: the servers) and the keys of the environment. A batch whose id the log lacks (the
run was killed as the provider took it) is looked up as a resumed run would: OpenAI's by its tag,
Anthropic's by when it was made and its size (``find``), then, once it has ended, by its custom ids;
one still running is named only if it is the one candidate.

With ``cancel`` (the run must not be in use) every batch still in progress is cancelled, the input
file of each OpenAI batch that has ended or is being cancelled is deleted, and so are the output and
error files of each whose games the run has all recorded (a resume needs no more of them). What it
does not delete, a resume can still use: cancelled requests are sent again in new batches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from engine.backends import ModelHub
from engine.backends.batch import batch_api, game_of
from engine.backends.batch.log import BATCHES_FILE, BatchLog, BatchState, Recorded, ids_digest
from engine.backends.settings import BackendSettings
from engine.records.ids import IdSet
from engine.records.rundir import RunDir, RunDirError
from engine.session.playing import recorded_games


class Shown(msgspec.Struct):
    """One batch as the command shows it: the log's view (``logged``: sent, collected, refused, not
    recorded) and the provider's (``state``, or why it could not be looked at), and what was done."""

    tag: str
    model: str
    requests: int
    logged: str
    batch_id: str | None = None
    state: BatchState | None = None
    problem: str = ""
    done: list[str] = []
    failed: bool = False  # it could not be looked at (or cleaned up): ``problem`` says why


def _logged(entry: Recorded) -> str:
    if entry.dropped:
        return "refused"
    if entry.batch_id is None:
        return "id not recorded"
    return "collected" if entry.collected else "sent"


async def _look_up(api: Any, tag: str, entry: Recorded, taken: set[str]) -> tuple[str | None, str]:
    """(the batch the log lost the id of, or None; a note)."""
    candidates = await api.find(tag, entry, taken)
    if not getattr(api, "verify", False):
        return (candidates[0], "found by its tag") if candidates else (None, "not found: never made")
    running = []
    for batch_id in candidates:
        if (await api.state(batch_id)).ended:
            results, _ = await api.results(batch_id)
            if ids_digest(results) == entry.digest:
                return batch_id, "found by its custom ids"
        else:
            running.append(batch_id)
    if len(running) == 1:
        return running[0], "found by its time and size (the one candidate)"
    if running:
        return None, f"not found: {len(running)} batches of its time and size still running ({', '.join(running)})"
    return None, "not found" if entry.at is None else "not found: never made"


async def _clean(api: Any, shown: Shown, games_done: bool) -> None:
    """Cancel the batch if in progress; delete the OpenAI files the run no longer needs."""
    assert shown.batch_id is not None and shown.state is not None
    if not shown.state.ended:
        await api.cancel(shown.batch_id)
        shown.done.append("cancelled")
        shown.state = await api.state(shown.batch_id)
    if not hasattr(api, "delete_file"):
        return
    files = [shown.state.input_file] if shown.state.input_file else []
    if games_done:
        files += shown.state.output_files
    deleted = [f for f in files if await api.delete_file(f)]
    if deleted:
        shown.done.append(f"deleted {len(deleted)} file{'s' * (len(deleted) > 1)}")


async def survey(path: Path, environ: dict[str, str], *, cancel: bool = False) -> list[Shown]:
    """Each batch of the run in ``path``, looked at (and, with ``cancel``, cleaned up). Raises
    RunDirError for a directory that is not a run with batches, or a run in use (``cancel``)."""
    run = RunDir.open(path)
    log_path = run.path / BATCHES_FILE
    if not log_path.exists():
        raise RunDirError(f"{run.path} has no {BATCHES_FILE}: the run sent no batch (--batch)")
    lock = run.lock() if cancel else None
    try:
        log = BatchLog(log_path)
        done = recorded_games(run, run.config().total) if cancel else IdSet()
        hub = ModelHub(run.model_settings() or BackendSettings(), environ)
        apis: dict[str, Any] = {}
        taken = {e.batch_id for e in log.batches.values() if e.batch_id is not None}
        shown: list[Shown] = []
        async with hub:
            for tag, entry in log.batches.items():
                row = Shown(tag, entry.model, entry.requests, _logged(entry), entry.batch_id)
                shown.append(row)
                if entry.dropped:
                    continue
                try:
                    api = apis.get(entry.model) or apis.setdefault(entry.model, batch_api(hub.settings, hub.builder.sdk_client, entry.model))
                    if row.batch_id is None:
                        row.batch_id, row.problem = await _look_up(api, tag, entry, taken)
                        if row.batch_id is None:
                            continue
                        taken.add(row.batch_id)
                    row.state = await api.state(row.batch_id)
                    if cancel:
                        games = [game_of(i) for i in log.wanted.get(tag, ())]
                        await _clean(api, row, bool(games) and all(g is not None and g in done for g in games))
                except Exception as exc:  # noqa: BLE001 - shown, and the next batch looked at
                    row.problem, row.failed = hub.secrets.scrub(f"{type(exc).__name__}: {exc}")[:300], True
        return shown
    finally:
        if lock is not None:
            lock.close()
