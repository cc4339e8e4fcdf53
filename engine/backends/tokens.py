"""Counting tokens with one tokenizer for every model, and what calls cost.

The message an agent sends is counted with tiktoken's ``o200k_base`` encoding when its file is on this
machine (tiktoken downloads encodings on first use, which fails offline; set ``TIKTOKEN_CACHE_DIR`` to
a folder holding it). Otherwise the count is an estimate, and says so: ``Tokenizer.name`` is
``"estimate:pieces"``, which counts each word, number and punctuation mark as one token and a word as one
more token per 6 characters past the first 6. On English chat text it lands within about 15% of
o200k_base. Provider-reported usage never goes through this: it is taken as reported.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile

ENCODING = "o200k_base"
_ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
_PIECE = re.compile(r"[A-Za-z]+|\d{1,3}|[^\sA-Za-z\d]")


def _cached_encoding_file() -> str | None:
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    cache_dir = cache_dir or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    path = os.path.join(cache_dir, hashlib.sha1(_ENCODING_URL.encode()).hexdigest())
    return path if os.path.exists(path) else None


def estimate_tokens(text: str) -> int:
    count = 0
    for piece in _PIECE.findall(text):
        count += 1 + max(0, math.ceil((len(piece) - 6) / 6))
    return count


class Tokenizer:
    """``count(text)``: tiktoken's o200k_base where available offline, else the labelled estimate."""

    def __init__(self, use_tiktoken: bool = True) -> None:
        self.name = "estimate:pieces"
        self._encode = None
        if use_tiktoken and _cached_encoding_file() is not None:
            try:
                import tiktoken

                self._encode = tiktoken.get_encoding(ENCODING).encode_ordinary
                self.name = f"tiktoken:{ENCODING}"
            except Exception:  # noqa: BLE001 - any failure to load means: estimate
                self._encode = None

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._encode is not None:
            return len(self._encode(text))
        return estimate_tokens(text)


# US dollars per million tokens: (input, cached input, output). List prices as published by the
# providers; check them before quoting costs, and override with --price MODEL=IN,CACHED,OUT.
PRICES: dict[str, tuple[float, float, float]] = {
    "gpt-4o": (2.50, 1.25, 10.00),
    "gpt-4o-mini": (0.15, 0.075, 0.60),
    "gpt-4.1": (2.00, 0.50, 8.00),
    "gpt-4.1-mini": (0.40, 0.10, 1.60),
    "claude-sonnet-4-5": (3.00, 0.30, 15.00),
    "claude-haiku-4-5": (1.00, 0.10, 5.00),
    "claude-opus-4-1": (15.00, 1.50, 75.00),
}


def parse_price(text: str) -> tuple[str, tuple[float, float, float]]:
    """``MODEL=IN,CACHED,OUT`` (dollars per million tokens) -> (model, prices). Raises ValueError."""
    model, sep, numbers = text.partition("=")
    parts = numbers.split(",")
    if not sep or not model.strip() or len(parts) != 3:
        raise ValueError(f"expected MODEL=INPUT,CACHED,OUTPUT dollars per million tokens, got {text!r}")
    values = tuple(float(p) for p in parts)
    if any(v < 0 for v in values):
        raise ValueError(f"prices must not be negative, got {text!r}")
    return model.strip(), values  # type: ignore[return-value]


def cost_usd(
    prices: dict[str, tuple[float, float, float]], model: str, prompt: int, cached: int, completion: int
) -> float | None:
    """What a call cost, or None when the model has no price. ``prompt`` includes ``cached``."""
    price = prices.get(model)
    if price is None:
        return None
    uncached = max(0, prompt - cached)
    return round((uncached * price[0] + cached * price[1] + completion * price[2]) / 1e6, 8)
