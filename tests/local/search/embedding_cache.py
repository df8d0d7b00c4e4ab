"""A disk cache of embeddings for the evaluation scripts (never for tests or the product).

The evaluation embeds the same few hundred highlights and queries on every run; with
all-mpnet-base-v2 (~70 texts/s on 2 cores) and the judge's token vectors that is most of a
run. `cached_embeddings()` wraps each model's embedding calls with a per-text cache keyed by
the model's id, loaded from and saved to `SCREVI_EVAL_CACHE` (default
`bench/.cache/evaluation-embeddings.pickle`, git-ignored). A model whose weights change gets
a new id (the converter version or file digest is in it), so a stale entry is never read.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
CACHE_ENV = "SCREVI_EVAL_CACHE"


def cache_path() -> Path:
    value = os.environ.get(CACHE_ENV, "").strip()
    return Path(value) if value else ROOT / "bench" / ".cache" / "evaluation-embeddings.pickle"


def _rows(
    store: dict[tuple[str, str, str], Any], kind: str, compute: Callable[[Any, list[str]], Any]
) -> Callable[[Any, list[str]], Any]:
    """A replacement for a method embedding a list of texts, one cached result per text."""

    def wrapped(self: Any, texts: list[str]) -> Any:
        # The multilingual model's engines share its id (the same weights) but not every
        # digit of their vectors: the engine is part of the key.
        model = str(getattr(self, "model_id", type(self).__name__))
        model += f"|{self.engine_id}" if hasattr(self, "engine_id") else ""
        missing = [t for t in dict.fromkeys(texts) if (model, kind, t) not in store]
        if missing:
            for text, row in zip(missing, _as_rows(compute(self, missing)), strict=True):
                store[(model, kind, text)] = row
        found = [store[(model, kind, t)] for t in texts]
        if kind == "tokens":
            return found
        return np.vstack(found).astype(np.float32) if found else compute(self, [])

    return wrapped


def _as_rows(result: Any) -> list[Any]:
    return list(result) if isinstance(result, list) else [row for row in result]


@contextmanager
def cached_embeddings() -> Iterator[None]:
    """Every English and multilingual embedding call served from the disk cache while
    inside; new entries are saved on the way out."""
    from screvi_mcp.local.search.embedder import Embedder
    from screvi_mcp.local.search.multilingual_model import MultilingualEmbedder

    path = cache_path()
    store: dict[tuple[str, str, str], Any] = {}
    if path.is_file():
        store = pickle.loads(path.read_bytes())
    size = len(store)
    originals = {
        (Embedder, "embed"): Embedder.embed,
        (Embedder, "token_vectors"): Embedder.token_vectors,
        (MultilingualEmbedder, "embed"): MultilingualEmbedder.embed,
        (MultilingualEmbedder, "embed_query"): MultilingualEmbedder.embed_query,
    }
    query = _rows(
        store,
        "query",
        lambda self, texts: [
            originals[(MultilingualEmbedder, "embed_query")](self, t) for t in texts
        ],
    )
    Embedder.embed = _rows(store, "embed", originals[(Embedder, "embed")])  # type: ignore[method-assign]
    Embedder.token_vectors = _rows(store, "tokens", originals[(Embedder, "token_vectors")])  # type: ignore[method-assign]
    MultilingualEmbedder.embed = _rows(store, "passage", originals[(MultilingualEmbedder, "embed")])  # type: ignore[method-assign]
    MultilingualEmbedder.embed_query = lambda self, text: query(self, [text])[0]  # type: ignore[method-assign]
    try:
        yield
    finally:
        for (owner, name), method in originals.items():
            setattr(owner, name, method)
        if len(store) > size:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(pickle.dumps(store, protocol=pickle.HIGHEST_PROTOCOL))
