"""`verify=true`: a probability, for each semantic match, that it is about the query.

Pluggable: anything with `probabilities(query, passages, cosines)` works. Two are built in:

- `CrossEncoderVerifier`, used when `SCREVI_VERIFIER_MODEL_DIR` names a directory with a
  cross-encoder `model.onnx` and its `tokenizer.json`: it reads query and highlight together,
  which a bi-encoder cannot, and its logit becomes a probability by sigmoid (one output) or
  softmax (two outputs: [off-topic, on-topic]).
- `JudgeVerifier` (judge.py), the default with the bundled MiniLM and with mpnet (each with
  weights fitted for its cosines), since no cross-encoder weights install offline: a
  logistic model over the cosine, token-level max-sim from the bundled MiniLM, keyword
  overlap and the margin to the query's best match, fitted on the tuning half of the
  labelled set.
- `CosineVerifier`, for another embedding model without a judge of its own: that model's
  chance of relevance by raw cosine (calibration.py). It adds no evidence beyond the cosine.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from tokenizers import Tokenizer

from screvi_mcp.local.search.calibration import Calibration
from screvi_mcp.local.search.embedder import MINILM_MODEL_ID, Embedder
from screvi_mcp.local.search.onnx_runtime import cpu_session

if TYPE_CHECKING:
    from screvi_mcp.local.search.judge import JudgeWeights

log = logging.getLogger("screvi_mcp.local.search")

VERIFIER_DIR_ENV = "SCREVI_VERIFIER_MODEL_DIR"
_MAX_PAIR_TOKENS = 512
_BATCH = 16


class Verifier(Protocol):
    def probabilities(
        self, query: str, passages: list[str], cosines: list[float]
    ) -> list[float]: ...


class CosineVerifier:
    def __init__(self, calibration: Calibration) -> None:
        self.calibration = calibration

    def probabilities(self, query: str, passages: list[str], cosines: list[float]) -> list[float]:
        return [self.calibration.chance(cosine) for cosine in cosines]


class CrossEncoderVerifier:
    def __init__(self, directory: Path) -> None:
        model_path, tokenizer_path = directory / "model.onnx", directory / "tokenizer.json"
        for needed in (model_path, tokenizer_path):
            if not needed.is_file():
                raise FileNotFoundError(f"{VERIFIER_DIR_ENV}: {needed} does not exist")
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=_MAX_PAIR_TOKENS)
        self._tokenizer.no_padding()
        self._session = cpu_session(model_path)
        self._inputs = {node.name for node in self._session.get_inputs()}

    def probabilities(self, query: str, passages: list[str], cosines: list[float]) -> list[float]:
        result: list[float] = []
        for start in range(0, len(passages), _BATCH):
            result.extend(self._batch(query, passages[start : start + _BATCH]))
        return result

    def _batch(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        encodings = self._tokenizer.encode_batch([(query, passage) for passage in passages])
        width = max(len(encoding.ids) for encoding in encodings)
        shape = (len(passages), width)
        ids, mask, types = (np.zeros(shape, dtype=np.int64) for _ in range(3))
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = encoding.attention_mask
            types[row, :n] = encoding.type_ids
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = types
        logits = np.asarray(self._session.run(None, feed)[0], dtype=np.float64)
        logits = logits.reshape(len(passages), -1)
        if logits.shape[1] == 1:
            probabilities = 1.0 / (1.0 + np.exp(-logits[:, 0]))
        else:
            shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
            probabilities = shifted[:, -1] / shifted.sum(axis=1)
        return [float(p) for p in probabilities]


def load_verifier(
    calibration: Calibration,
    embedder: Embedder | None = None,
    judge: JudgeWeights | None = None,
) -> Verifier:
    """A cross-encoder if one is configured; else the judge over several signals, with the
    `judge` weights fitted for `embedder`'s model, or MiniLM's for the bundled MiniLM; else
    (a model nobody fitted a judge for) the cosine curve."""
    directory = os.environ.get(VERIFIER_DIR_ENV, "").strip()
    if directory:
        try:
            return CrossEncoderVerifier(Path(directory).expanduser())
        except Exception as exc:  # a model file onnxruntime or tokenizers cannot read
            # The start-up check only sees that the files exist; a damaged model must not
            # take search down with it (every call would fail): verify uses the default.
            log.warning(
                "the cross-encoder in %s could not be loaded (%s); verify=true uses the "
                "default check instead: fix or unset %s",
                directory,
                type(exc).__name__,
                VERIFIER_DIR_ENV,
            )
    if embedder is None:
        return CosineVerifier(calibration)
    from screvi_mcp.local.search.judge import MINILM_JUDGE, JudgeVerifier

    if judge is None and embedder.model_id == MINILM_MODEL_ID:
        judge = MINILM_JUDGE
    if judge is not None:
        return JudgeVerifier(judge)
    return CosineVerifier(calibration)
