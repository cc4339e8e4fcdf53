"""What a run spends on models: the budget and caps while it runs (``budget``) and the forecast before
any paid call (``forecast``)."""
