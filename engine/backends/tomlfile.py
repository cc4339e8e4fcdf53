"""Reading a user's TOML file (prices, endpoints) with one-line errors that name it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def read_toml(path: str | Path, what: str) -> dict[str, Any]:
    """The file's tables; ValueError naming ``what`` (say "price file") and ``path`` if it cannot be read."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"the {what} {path} is not TOML: {exc}") from None
