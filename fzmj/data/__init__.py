"""Datasets of recorded play (docs/data.md): ``collect`` writes every decision of any agents'
games as hand rows (Parquet shards and a manifest); ``open_dataset`` / ``Dataset.batches`` replay
them through the engine into observations (v2, v3, the hand features), masks, actions and returns,
bit for bit what the env gave.

Layer: above ``fzmj.agents`` (the collection plays any agent spec through the evaluator), below
``fzmj.train`` (the warm start reads a dataset); see docs/layers.md.
"""

from .collector import collect
from .format import SCHEMA_VERSION, DatasetError
from .loader import Dataset, open_dataset

__all__ = ["SCHEMA_VERSION", "Dataset", "DatasetError", "collect", "open_dataset"]
