"""Which embedding model a library's semantic index gets, with the calibration fitted for it.

Ranking code reads `ModelChoice.calibration` and `.judge` and never asks which English model
it got. The order:

1. `SCREVI_EMBEDDING_MODEL_DIR`: that model, with the calibration.json beside it if any;
2. `SCREVI_ENGLISH_MODEL` set: that English model (an error if it cannot load: it was asked
   for by name);
3. otherwise all-mpnet-base-v2, except where it cannot serve: a library already embedded
   with MiniLM keeps MiniLM until `screvi-mcp reindex` (re-embedding it at start-up would
   leave it unsearchable by meaning for minutes), and without mpnet's wheels, or when they
   cannot be converted, MiniLM is the light fallback. Either way `note` says so, with the
   command that moves to mpnet.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from screvi_mcp.local.search import embedder as embedders
from screvi_mcp.local.search import mpnet
from screvi_mcp.local.search.calibration import MINILM, Calibration, calibration_for_directory
from screvi_mcp.local.search.judge import JudgeWeights
from screvi_mcp.local.search.mpnet.calibration import MPNET_CALIBRATION, MPNET_JUDGE


@dataclass(frozen=True)
class ModelChoice:
    embedder: embedders.Embedder
    calibration: Calibration
    judge: JudgeWeights | None  # None: the verifier's default judge for this calibration
    note: str | None = None  # why a lighter model than the default serves, and the fix


def choose_model(recorded: str | None = None) -> ModelChoice:
    """The model for a library whose vectors were made by `recorded` (None: none yet).

    Raises EmbeddingModelError or CalibrationFileError when the configured model cannot
    serve at all (the caller makes search keyword-only and says why).
    """
    directory = os.environ.get(embedders.MODEL_DIR_ENV, "").strip()
    if directory:
        # Through `load_embedder` (not `_load_embedder`): tests share one load across cases.
        loaded = embedders.load_embedder()
        return ModelChoice(loaded, calibration_for_directory(Path(directory).expanduser()), None)
    configured = mpnet.configured()
    if configured is not None:
        return _english(configured, embedders.load_embedder())
    # What a library records is "<model id>/<text recipe>" (index.index_model_id).
    if recorded is not None and recorded.split("/", 1)[0] == embedders.MINILM_MODEL_ID:
        minilm = embedders.load_english_embedder(mpnet.MINILM)
        return _english(mpnet.MINILM, minilm, mpnet.KEPT_NOTE)
    note = mpnet.fallback_note()
    if note is not None:
        return _english(mpnet.MINILM, embedders.load_english_embedder(mpnet.MINILM), note)
    try:
        return _english(mpnet.MPNET, embedders.load_embedder())
    except embedders.EmbeddingModelError as failure:
        note = f"{mpnet.MPNET_NAME} could not be loaded, so search by meaning uses the light "
        note += f"fallback {mpnet.MINILM_NAME}: {failure}"
        return _english(mpnet.MINILM, embedders.load_english_embedder(mpnet.MINILM), note)


def _english(name: str, loaded: embedders.Embedder, note: str | None = None) -> ModelChoice:
    if name == mpnet.MPNET:
        return ModelChoice(loaded, MPNET_CALIBRATION, MPNET_JUDGE, note)
    return ModelChoice(loaded, MINILM, None, note)
