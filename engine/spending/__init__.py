"""What a run spends on models: the budget and caps while it runs (``budget``) and the forecast before
any paid call (``forecast``)."""

from engine.spending.budget import Caps, PerGame, Spending
from engine.spending.forecast import Forecast, forecast, mean_reply_tokens, play_sampled

__all__ = ["Caps", "Forecast", "PerGame", "Spending", "forecast", "mean_reply_tokens", "play_sampled"]
