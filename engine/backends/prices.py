"""What model calls cost: a price table read from ``prices.toml`` beside this module, extended by a
user's file of the same form (``--prices FILE``) or single entries (``--price``).

A model with no price costs ``None`` (shown as ``-``, never as 0) and is added to
``PriceTable.missing``, which the dashboard, the run's log and the end of the run name once each.
"""

from __future__ import annotations

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


def read_prices(path: str | Path) -> dict[str, Price]:
    """A price file's ``[models."NAME"]`` tables. Raises ValueError naming the file and the entry."""
    data = read_toml(path, "price file")
    models = data.get("models")
    if not isinstance(models, dict) or set(data) - {"models"}:
        raise ValueError(f"the price file {path} must hold [models.\"NAME\"] tables and nothing else")
    prices: dict[str, Price] = {}
    for name, entry in models.items():
        try:
            prices[name] = msgspec.convert(entry, Price)
        except (msgspec.ValidationError, ValueError) as exc:
            raise ValueError(f"the price file {path}, model {name!r}: {exc}") from None
    return prices


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
    by ``-`` (a dated snapshot of a listed model)."""

    def __init__(self, extra: dict[str, tuple[float, ...]] | None = None, *, built_in: bool = True) -> None:
        self.prices: dict[str, Price] = read_prices(BUILT_IN) if built_in else {}
        self.prices.update({name: Price(*numbers) for name, numbers in (extra or {}).items()})
        self.missing: set[str] = set()  # provider:model names priced at None so far

    def price(self, provider: str, model: str) -> Price | None:
        for key in (f"{provider}:{model}", model):
            if key in self.prices:
                return self.prices[key]
        prefixes = [k for k in self.prices if model.startswith(k + "-")]
        return self.prices[max(prefixes, key=len)] if prefixes else None

    def cost(self, provider: str, model: str, prompt: int, cached: int, written: int, completion: int) -> float | None:
        price = self.price(provider, model)
        if price is None:
            self.missing.add(f"{provider}:{model}")
            return None
        return price.cost(prompt, cached, written, completion)



def price_numbers(prices: dict[str, Price]) -> dict[str, tuple[float, ...]]:
    """Prices as saved with a run's model settings."""
    return {name: tuple(v for v in msgspec.structs.astuple(p) if v is not None) for name, p in prices.items()}
