"""What model calls cost: a price table read from ``prices.toml`` beside this module, extended by a
user's file of the same form (``--prices FILE``) or single entries (``--price``).

A model with no price costs ``None`` (shown as ``-``, never as 0) and is added to
``PriceTable.missing``, which the dashboard, the run's log and the end of the run name once each.

A call sent in a provider's batch (``--batch``) costs its price times the batch factor of the file's
``[batch]`` table: a share of the listed price (0.5: half), keyed like the prices (``PROVIDER:MODEL``,
``MODEL``, the longest ``MODEL`` prefix followed by ``-``) or by the provider. A model with no factor
pays the listed price in a batch too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from engine.backends.tomlfile import read_toml

BUILT_IN = Path(__file__).with_name("prices.toml")


class Price(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Dollars per million tokens. ``cache_write`` None: cache writes cost as input."""

    input: float
    cached_input: float
    output: float
    cache_write: float | None = None

    def __post_init__(self) -> None:
        if min(self.input, self.cached_input, self.output, self.cache_write or 0.0) < 0:
            raise ValueError("prices must not be negative")

    def cost(self, prompt: int, cached: int, written: int, completion: int) -> float:
        """``prompt`` counts every prompt token, the ``cached`` reads and ``written`` cache writes included."""
        uncached = max(0, prompt - cached - written)
        write = self.input if self.cache_write is None else self.cache_write
        dollars = uncached * self.input + cached * self.cached_input + written * write + completion * self.output
        return round(dollars / 1e6, 8)


def read_price_file(path: str | Path) -> tuple[dict[str, Price], dict[str, float]]:
    """A price file's ``[models."NAME"]`` tables and its ``[batch]`` factors. Raises ValueError
    naming the file and the entry."""
    data = read_toml(path, "price file")
    models = data.get("models", {})
    if not isinstance(models, dict) or set(data) - {"models", "batch"} or not set(data):
        raise ValueError(f"the price file {path} must hold [models.\"NAME\"] tables (and a [batch] table) and nothing else")
    factors = data.get("batch", {})
    if not isinstance(factors, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in factors.values()
    ):
        raise ValueError(f"the price file {path}: [batch] must give each provider or model a share of its price, from 0 to 1")
    prices: dict[str, Price] = {}
    for name, entry in models.items():
        try:
            prices[name] = msgspec.convert(entry, Price)
        except (msgspec.ValidationError, ValueError) as exc:
            raise ValueError(f"the price file {path}, model {name!r}: {exc}") from None
    return prices, {name: float(v) for name, v in factors.items()}


def price_entry(model: str, numbers: str) -> tuple[str, tuple[float, ...]]:
    """One model's prices as the command line gives them: ``MODEL`` and ``IN,CACHED,OUT[,CACHE_WRITE]``
    (dollars per million tokens). Raises ValueError."""
    text = f"{model}={numbers}"
    parts = numbers.split(",")
    if len(parts) not in (3, 4):
        raise ValueError(f"expected MODEL=INPUT,CACHED,OUTPUT[,CACHE_WRITE] dollars per million tokens, got {text!r}")
    try:
        values = tuple(float(p) for p in parts)
        Price(*values)
    except ValueError as exc:
        raise ValueError(f"{exc}, got {text!r}") from None
    return model, values


class PriceTable:
    """The built-in prices with ``extra`` over them (as saved with a run: model -> (input, cached
    input, output[, cache write])). ``price(provider, model)`` looks up
    ``PROVIDER:MODEL``, then ``MODEL``, then the longest entry that ``MODEL`` starts with followed
    by ``-`` (a dated snapshot of a listed model). A model that none of these prices and that
    ``local(name)`` says is served on this machine costs nothing."""

    def __init__(
        self, extra: dict[str, tuple[float, ...]] | None = None, *, built_in: bool = True,
        batch: dict[str, float] | None = None, local: Callable[[str], bool] = lambda name: False,
    ) -> None:
        self.prices, self.batch = read_price_file(BUILT_IN) if built_in else ({}, {})
        self.prices.update({name: Price(*numbers) for name, numbers in (extra or {}).items()})
        self.batch.update(batch or {})
        self.local = local
        self.missing: set[str] = set()  # provider:model names priced at None so far

    @staticmethod
    def _find(table: dict, provider: str, model: str):
        for key in (f"{provider}:{model}", model):
            if key in table:
                return table[key]
        prefixes = [k for k in table if model.startswith(k + "-")]
        return table[max(prefixes, key=len)] if prefixes else None

    def price(self, provider: str, model: str) -> Price | None:
        found = self._find(self.prices, provider, model)
        return FREE if found is None and self.local(f"{provider}:{model}") else found

    def batch_factor(self, provider: str, model: str) -> float:
        """What a call sent in a batch pays, as a share of the listed price (1: no discount)."""
        factor = self._find(self.batch, provider, model)
        return self.batch.get(provider, 1.0) if factor is None else factor

    def cost(
        self, provider: str, model: str, prompt: int, cached: int, written: int, completion: int, *, batch: bool = False,
    ) -> float | None:
        """What a call cost; ``batch``: it went in a provider's batch (``batch_factor``)."""
        price = self.price(provider, model)
        if price is None:
            self.missing.add(f"{provider}:{model}")
            return None
        cost = price.cost(prompt, cached, written, completion)
        return round(cost * self.batch_factor(provider, model), 8) if batch else cost


FREE = Price(0.0, 0.0, 0.0)


def price_numbers(prices: dict[str, Price]) -> dict[str, tuple[float, ...]]:
    """Prices as saved with a run's model settings."""
    return {name: tuple(v for v in msgspec.structs.astuple(p) if v is not None) for name, p in prices.items()}
