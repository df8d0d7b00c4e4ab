"""The judge's token vectors: from the bundled MiniLM, kept per text in a bounded cache.

verify=true's cost was the model run over the query and its 20 matches (97% of it; issue 30).
Three things make that run cheaper and repeatable:

- **The bundled MiniLM, whichever model ranks.** With all-mpnet-base-v2 ranking, mpnet's own
  int8 model cost 2.1x MiniLM's CPU for the same texts, and its token vectors varied with
  their batch-mates (onnxruntime's dynamic quantisation takes one scale per batch: up to
  0.02 in a component). MiniLM's shipped file computes in float, so a text's vectors are
  the same alone or in any batch (test_verify_speed.py).
- **Only the layers the judge needs.** mpnet's judge reads MiniLM's first 3 of 6 layers
  (`JudgeWeights.token_layers`; half the CPU again): fitted on the tuning half, it held
  held-out ranking and calibration as the full 6 did (docs/search.md, "Cost"). MiniLM's own
  judge reads all 6, from the session that ranks, so it costs no second model.
- **A cache per text.** Because a text's vectors do not depend on its batch, they can be
  kept: a match judged once costs nothing the next time, and a repeated query costs no model
  run at all. Keyed by a digest of the text (one cache per token model; an edited highlight
  is a new key, its old entry ages out), bounded by bytes, least recently used dropped first.
  The cached arrays are read-only, so no caller can change another's evidence.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from screvi_mcp.local.search.embedder import (
    MINILM_MODEL_ID,
    Embedder,
    EmbeddingModelError,
    Vectors,
    load_english_embedder,
)
from screvi_mcp.local.search.model_folders import build_once, file_digest

logger = logging.getLogger(__name__)

TokenSet = tuple[list[str], Vectors]

# About 45 KB a highlight (30 tokens x 384 float32): some 700 highlights, the matches of 35
# distinct queries or more. Bounded so that a long session does not grow the server.
CACHE_BYTES = 32 * 1024 * 1024


class TokenCache:
    """Token vectors per text from one token model, loaded when first needed (a server that
    never verifies never loads it)."""

    def __init__(self, load: Callable[[], Embedder], max_bytes: int = CACHE_BYTES) -> None:
        self._load = load
        self._embedder: Embedder | None = None
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, TokenSet] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._loading = threading.Lock()
        self.computed = 0  # texts run through the model (tests and the benchmark read it)

    def token_vectors(self, texts: list[str]) -> list[TokenSet]:
        """Each text's tokens and L2-normalised vectors (Embedder.token_vectors), in order."""
        keys = [_key(text) for text in texts]
        found: dict[bytes, TokenSet] = {}
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is not None:
                    self._entries.move_to_end(key)
                    found[key] = entry
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        if missing:
            computed = self.embedder().token_vectors(list(missing.values()))
            for _, vectors in computed:
                vectors.flags.writeable = False
            found.update(zip(missing, computed, strict=True))
            self._store(dict(zip(missing, computed, strict=True)))
        return [found[key] for key in keys]

    def embedder(self) -> Embedder:
        with self._loading:  # two first verifies at once build the model once
            if self._embedder is None:
                self._embedder = self._load()
        return self._embedder

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _store(self, entries: dict[bytes, TokenSet]) -> None:
        with self._lock:
            self.computed += len(entries)
            for key, entry in entries.items():
                if key in self._entries:
                    continue
                size = entry[1].nbytes
                if size > self.max_bytes:
                    continue
                self._entries[key] = entry
                self._bytes += size
            while self._bytes > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped[1].nbytes


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


MINILM_LAYERS = 6
_ONNX_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


@functools.cache
def cache_for(layers: int = MINILM_LAYERS) -> TokenCache:
    """One cache per process and token model: libraries opened side by side share it."""
    if layers == MINILM_LAYERS:
        return TokenCache(_bundled_minilm)
    return TokenCache(functools.partial(first_layers, layers))


def _bundled_minilm() -> Embedder:
    from screvi_mcp.local.search.mpnet import MINILM

    return load_english_embedder(MINILM)


def first_layers(layers: int, root: Path | None = None, source: Path | None = None) -> Embedder:
    """The bundled MiniLM cut after its `layers`-th transformer layer: a model of its own,
    whose token vectors are that layer's output.

    Cut once (about a second, needs `onnx`) into the model cache, in a folder named by the
    digest of the shipped file (`source`, for tests), which later processes load: a new
    MiniLM wheel is cut afresh. When the cache cannot be written, cut in memory as before.
    """
    from screvi_mcp.local.search.minilm import int8
    from screvi_mcp.local.search.mpnet import MINILM_NAME, cache_root

    shipped = source if source is not None else int8.shipped()
    name = f"{MINILM_NAME}-layers-{layers}-{file_digest(shipped)[:12]}"
    target = (root if root is not None else cache_root()) / name
    model_id = f"{MINILM_MODEL_ID}-layers-{layers}"
    try:
        folder = build_once(target, functools.partial(_cut, shipped, layers))
    except OSError as error:  # a read-only or full disk: verify still works, paying each time
        logger.warning("could not keep the cut MiniLM in %s (%s)", target.parent, error)
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            _cut(shipped, layers, folder)
            return Embedder(folder / "model.onnx", folder / "tokenizer.json", model_id)
    return Embedder(folder / "model.onnx", folder / "tokenizer.json", model_id)


def _cut(shipped: Path, layers: int, work: Path) -> None:
    """Write the cut model.onnx and MiniLM's tokenizer.json into `work`."""
    import shutil

    import onnx
    from onnx.utils import Extractor

    model = onnx.load(str(shipped))
    norms = [node for node in model.graph.node if node.op_type == "LayerNormalization"]
    # The embeddings' LayerNorm, then two per layer (after attention, after the MLP).
    if len(norms) != 2 * MINILM_LAYERS + 1 or not 1 <= layers <= MINILM_LAYERS:
        raise EmbeddingModelError(f"cannot cut the bundled MiniLM after layer {layers}")
    part = Extractor(model).extract_model(_ONNX_INPUTS, [norms[2 * layers].output[0]])
    onnx.save(part, str(work / "model.onnx"))
    tokenizer = resources.files("screvi_mcp.local.search.minilm") / "tokenizer.json"
    with resources.as_file(tokenizer) as tokens:
        shutil.copy(tokens, work / "tokenizer.json")
