"""Passages follow the article's text inside the writing transaction, whatever wrote it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.passages import attach
from screvi_mcp.local.passages.search import PassageFilters, PassageQuery, search_passages
from screvi_mcp.local.storage.library import Library

FIRST = "\n\n".join(
    [
        "Tide pools hold whole worlds: anemones, crabs and small fish trapped by the ebb. " * 6,
        "At low tide the rocks dry in the sun and only the deepest pools stay cool. " * 6,
    ]
)
SECOND = "Lighthouses were kept by families who trimmed the wicks every night. " * 8


def _article(library: Library, text: str | None) -> str:
    with library.write() as conn:
        article_id = article_rows.insert_article(conn, "http://x.test/a", "http://x.test/a")
        conn.execute(
            "UPDATE articles SET content_text = ?, title = 'Shore', parse_state = 'parsed' "
            "WHERE source_id = ?",
            (text, article_id),
        )
    return article_id


def _passages(conn: sqlite3.Connection, article_id: str) -> list[tuple[int, int, str]]:
    rows = conn.execute(
        "SELECT start, length, text FROM article_passages WHERE article_id = ? ORDER BY ordinal",
        (article_id,),
    )
    return [(int(r[0]), int(r[1]), str(r[2])) for r in rows]


def _keyword_ids(conn: sqlite3.Connection, words: str) -> list[str]:
    hits, _ = search_passages(conn, None, PassageQuery(words, PassageFilters()), root_url="x")
    return [hit["article"]["id"] for hit in hits]


def test_passages_hold_exact_offsets_and_are_rebuilt_when_the_text_changes(
    tmp_path: Path,
) -> None:
    library = Library.open(tmp_path / "lib.sqlite3")
    try:
        conn = library.connection()
        article_id = _article(library, FIRST)
        first = _passages(conn, article_id)
        assert len(first) == 2
        assert all(FIRST[start : start + length] == text for start, length, text in first)
        assert _keyword_ids(conn, "anemones crabs") == [article_id]  # at once: no worker
        queued = conn.execute("SELECT count(*) FROM passage_embedding_queue").fetchone()[0]
        assert queued == 2

        with library.write() as write:
            write.execute(
                "UPDATE articles SET content_text = ? WHERE source_id = ?", (SECOND, article_id)
            )
        assert [text for _, _, text in _passages(conn, article_id)] == [SECOND.strip()]
        assert _keyword_ids(conn, "anemones") == []
        assert _keyword_ids(conn, "lighthouses wicks") == [article_id]
        fts = conn.execute("SELECT count(*) FROM article_passages_fts").fetchone()[0]
        assert fts == 1
        # A title is a keyword of every passage, and follows a rename.
        with library.write() as write:
            write.execute(
                "UPDATE articles SET title = 'Keepers' WHERE source_id = ?", (article_id,)
            )
        assert _keyword_ids(conn, "keepers") == [article_id]
        assert _keyword_ids(conn, "shore") == []
    finally:
        library.close()


def test_text_written_outside_library_write_is_indexed_at_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    library = Library.open(path)
    try:
        article_id = _article(library, None)
    finally:
        library.close()
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("UPDATE articles SET content_text = ? WHERE source_id = ?", (FIRST, article_id))
    raw.close()
    library = Library.open(path)
    try:
        assert len(_passages(library.connection(), article_id)) == 2
    finally:
        library.close()


def test_soft_deleted_articles_are_not_found(tmp_path: Path) -> None:
    library = Library.open(tmp_path / "lib.sqlite3")
    try:
        article_id = _article(library, FIRST)
        with library.write() as conn:
            conn.execute(
                "UPDATE sources SET deleted_at = '2026-01-01T00:00:00Z' WHERE id = ?", (article_id,)
            )
        assert _keyword_ids(library.connection(), "anemones") == []
    finally:
        library.close()


def test_passage_vectors_come_through_the_queue_and_find_by_meaning(tmp_path: Path) -> None:
    library = Library.open(tmp_path / "lib.sqlite3")
    try:
        index = attach.attach(library)
        if index is None:
            return  # keyword-only install: covered by the tests above
        article_id = _article(library, FIRST + "\n\n" + SECOND)
        assert attach.wait_until_embedded(library, 60)
        query = PassageQuery("keepers of the lamp on the coast at night", PassageFilters())
        hits, _ = search_passages(library.connection(), index, query, root_url="x")
        assert hits and hits[0]["article"]["id"] == article_id
        assert hits[0]["passage"]["text"].startswith("Lighthouses")
        assert hits[0]["match_type"] == "semantic"
        # A rebuilt passage loses its old vector at once (ids are never reused).
        with library.write() as conn:
            conn.execute(
                "UPDATE articles SET content_text = ? WHERE source_id = ?", (FIRST, article_id)
            )
        assert (
            library.connection().execute("SELECT count(*) FROM passage_embeddings").fetchone()[0]
            == 0
        )
        hits, _ = search_passages(library.connection(), index, query, root_url="x")
        assert all("Lighthouses" not in hit["passage"]["text"] for hit in hits)
    finally:
        attach.detach(library)
        library.close()


def test_a_backlog_is_cut_in_bounded_steps_newest_first(tmp_path: Path) -> None:
    from screvi_mcp.local.storage.store.passages import FLUSH_LIMIT

    path = tmp_path / "lib.sqlite3"
    library = Library.open(path)
    try:
        ids = [_article(library, None) for _ in range(FLUSH_LIMIT * 2 + 5)]
    finally:
        library.close()
    raw = sqlite3.connect(path)
    with raw:  # bodies written behind the library's back, as an old version would
        raw.executemany(
            "UPDATE articles SET content_text = ? WHERE source_id = ?",
            [(FIRST, article_id) for article_id in ids],
        )
    raw.close()
    library = Library.open(path)
    try:
        conn = library.connection()
        done = conn.execute("SELECT count(DISTINCT article_id) FROM article_passages").fetchone()
        assert done[0] == FLUSH_LIMIT  # opening pays for one step only
        newest = _article(library, SECOND)  # a write: its own article is cut at once
        assert [text for _, _, text in _passages(conn, newest)] == [SECOND.strip()]
        assert attach.drain(library) == 1  # 105 - 50 at open - 50 with that write
        left = conn.execute("SELECT count(*) FROM article_passages_pending").fetchone()[0]
        assert left == 0 and all(len(_passages(conn, article_id)) == 2 for article_id in ids)
    finally:
        library.close()
