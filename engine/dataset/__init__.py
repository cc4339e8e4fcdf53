"""Training data from teachers' play: a game's scripted strategies or its own demonstrations (its
planner's optimal and near-optimal plays) played through the engine, every turn written as the chat
the engine sends a model in that seat and the reply that was played (``build``, ``samples``,
``teacher``), to a folder written whole or not at all (``files``); reasoning traces a model writes
for them (``traces``); a LoRA adapter trained on them (``training``, the train extra)."""

from engine.dataset.build import DEFAULT_HOLDOUT, Built, DatasetPlan, Part, Trajectory, build, drawn, pool, seeds
from engine.dataset.files import CARD, META, README, TRAIN, card_of, read_dataset, readme, write_dataset, write_files
from engine.dataset.samples import DatasetError, Sample, SampleInfo, checked, messages, read_back
from engine.dataset.training import LoraSettings, load_model, samples_of, train_lora, trainer_for
from engine.dataset.traces import TRACED, TraceForecast, forecast, prepare, trace, trace_request

__all__ = [
    "CARD", "DEFAULT_HOLDOUT", "META", "README", "TRACED", "TRAIN", "LoraSettings", "TraceForecast", "Built", "DatasetError", "DatasetPlan", "Part", "Sample",
    "SampleInfo", "Trajectory", "build", "card_of", "checked", "drawn", "forecast", "messages", "pool", "prepare", "read_back",
    "read_dataset", "readme", "samples_of", "seeds", "trace", "trace_request", "load_model", "train_lora", "trainer_for",
    "write_dataset", "write_files",
]
