"""What the study's researcher sees: live status (who is waiting, playing, done, left; games per
condition against their targets) and one row per participant (their conditions, time on task, the
games they left unfinished, those lost to a fault such as the model partner down, their order of
blocks), as JSON for the admin page and as ``participants.csv`` in the study's
directory. Pseudonymous ids only; the completion codes are there so that a platform's submissions
can be checked against them."""

from __future__ import annotations

import csv
import io
import time
from collections import Counter
from pathlib import Path
from typing import Any

from engine.study import Ended, Interrupted, Person, StudyHost, cells, target

COLUMNS = (
    "participant", "status", "code", "joined", "seconds_on_task", "games_played", "games_unfinished", "walked_away",
    "conditions", "seats", "block_order", "faults",
)


def stage(host: StudyHost, person: Person) -> str:
    if person.done is not None:
        return "done"
    if person.left is not None:
        return person.left.reason  # left (they said so), gone (their page was away), full (no game was left)
    if person.playing() is not None:
        return "playing"
    if any(w.participant == person.id for w in host.waiting):
        return "waiting"
    return "between games"


def participant_row(host: StudyHost, person: Person) -> dict[str, Any]:
    end = person.done.at if person.done else person.left.at if person.left else time.time()
    played = [g for g in person.games if isinstance(g.ended, Ended) and g.ended.error is None]
    return {
        "participant": person.id, "status": stage(host, person), "code": person.joined.code,
        "joined": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(person.joined.at)),
        "seconds_on_task": round(end - person.joined.at, 1), "games_played": len(played),
        "games_unfinished": person.unfinished(), "walked_away": person.walked_away(),
        "conditions": " ".join(f"{host.study.blocks[g.started.block].game}:{g.started.condition}" for g in person.games),
        "seats": " ".join(r for g in person.games for r, p in g.started.people.items() if p == person.id),
        "block_order": " ".join(str(b) for b in person.order(len(host.study.blocks))),
        "faults": sum(isinstance(g.ended, Ended) and g.ended.error is not None and g.ended.absent is None for g in person.games),
    }


def status(host: StudyHost) -> dict[str, Any]:
    """The admin page's data."""
    people = [participant_row(host, p) for p in host.ledger.people.values()]
    tally = dict(Counter(row["status"] for row in people))
    conditions = []
    for b in range(len(host.blocks)):
        games = [g for (gb, _), g in host.ledger.games.items() if gb == b]
        for cell in cells(host.study, b):
            mine = [g for g in games if g.cell == cell]
            conditions.append({
                "block": b, "game": host.study.blocks[b].game, "cell": cell.label, "target": target(host.study, cell),
                "counted": sum(isinstance(g.ended, Ended) and g.counts() for g in mine),
                "playing": sum(g.ended is None for g in mine),
                "not_counted": sum(g.ended is not None and not g.counts() for g in mine),
                "interrupted": sum(isinstance(g.ended, Interrupted) for g in mine),
            })
    now = time.monotonic()
    waiting = [{"participant": w.participant, "block": w.block, "condition": w.condition, "seconds": round(now - w.since, 1)}
               for w in host.waiting]
    return {"study": host.study.name, "tally": tally, "waiting": waiting, "conditions": conditions, "participants": people}


def participants_csv(host: StudyHost) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for person in host.ledger.people.values():
        writer.writerow(participant_row(host, person))
    return out.getvalue()


def write_participants(host: StudyHost) -> None:
    """``participants.csv`` in the study's directory, replaced whole."""
    path = host.out / "participants.csv"
    tmp = path.with_suffix(".csv.tmp")
    tmp.write_text(participants_csv(host), encoding="utf-8")
    tmp.replace(path)


ADMIN_PAGE = (Path(__file__).parent / "admin.html").read_text(encoding="utf-8")
