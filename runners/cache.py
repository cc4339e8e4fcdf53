"""``asymgames cache stats|prune``: the response cache's file (``--cache``, ``engine.backends.cache``)
looked at and kept small. ``stats`` counts its entries and its bytes on disk; ``prune`` removes the
entries older than ``--older-than`` and those that no longer decode, and with ``--vacuum`` gives the
freed space back to the disk. Runs using the cache meanwhile are safe: each removal is a transaction.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time

from engine.backends import CacheSettings, cache_file, prune, store_figures

__all__ = ["main"]

DAY = 24 * 3600.0


def _age(text: str) -> float:
    """Days (``30``, ``0.5``) or a duration with its unit (``12h``, ``2w``), in seconds."""
    try:
        days = float(text)
    except ValueError:
        from runners.flags.models import _duration

        return _duration(text)
    if not days >= 0:
        raise argparse.ArgumentTypeError(f"expected days (30) or a duration (12h, 2w), got {text!r}")
    return days * DAY


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.2f} MB"


def _day(stamp: float | None) -> str:
    return "-" if stamp is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog or "python -m runners.cache", description="The response cache's file (--cache): its figures, and pruning.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="stats|prune")
    stats = commands.add_parser("stats", help="entries, the oldest and newest, bytes on disk")
    trim = commands.add_parser("prune", help="remove old entries and damaged ones")
    for sub in (stats, trim):
        sub.add_argument("--cache-dir", metavar="DIR", help="the cache's folder (default $ASYMGAMES_CACHE, else ~/.cache/asymgames)")
    trim.add_argument("--older-than", type=_age, metavar="DAYS", help="remove the entries kept more than DAYS days ago (or 12h, 2w); "
                      "without it only entries that no longer decode are removed")
    trim.add_argument("--vacuum", action="store_true", help="then rewrite the file to give the freed space back to the disk")
    args = parser.parse_args(argv)
    path = cache_file(CacheSettings(directory=args.cache_dir))
    if args.command == "prune" and not path.exists():
        print(f"{path}: no cache kept yet: nothing to prune")
        return 0
    try:
        if args.command == "stats":
            figures = store_figures(path)
            print(f"{path}: {figures['entries']:,} entries, {_megabytes(figures['bytes'])} on disk, "
                  f"oldest {_day(figures['oldest'])}, newest {_day(figures['newest'])}")
            return 0
        done = prune(path, args.older_than, vacuum=args.vacuum)
    except sqlite3.Error as exc:
        print(f"{parser.prog}: error: {path}: {exc}", file=sys.stderr)
        return 1
    print(f"{path}: removed {done['old']:,} old and {done['damaged']:,} damaged entries; {done['entries']:,} left; "
          f"{_megabytes(done['bytes_before'])} -> {_megabytes(done['bytes_after'])} on disk")
    return 0


if __name__ == "__main__":
    sys.exit(main())
