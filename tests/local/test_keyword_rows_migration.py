"""Migration 0013: a library made before it keeps a complete keyword index, tags included.

0013 replaces the triggers that rewrote a highlight's keyword row at every write with ones
that only record it for `Library.write` to rewrite before the commit. A file written under
0012's triggers must come through with every row findable, and take writes afterwards.
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.keyword import keyword_ranking
from screvi_mcp.local.storage import clock, db
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights

MIGRATION = "0013_keyword_rows_once.sql"
ROW = "content, note, source_name, source_author, tags"


def migrated_up_to(path: Path, last_excluded: str) -> sqlite3.Connection:
    conn = db.connect(path)
    conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    for name, sql in db.migration_steps():
        if name >= last_excluded:
            break
        conn.executescript(f"BEGIN;\n{sql}\nCOMMIT;")
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (name, clock.now()))
    return conn


def add_rows(conn: sqlite3.Connection) -> dict[str, str]:
    """A source with an author, tagged and untagged highlights, a renamed tag, a deletion."""
    now = clock.now()
    ids = {name: str(uuid.uuid4()) for name in ("book", "tagged", "plain", "gone", "t1", "t2")}
    conn.execute(
        "INSERT INTO sources(id, name, type, author, created_at, updated_at) "
        "VALUES (?, 'Meditations', 'book', 'Marcus Aurelius', ?, ?)",
        (ids["book"], now, now),
    )
    for key, content, note in [
        ("tagged", "the obstacle becomes the way", "reread often"),
        ("plain", "waste no more time arguing", None),
        ("gone", "a deleted thought about lanterns", None),
    ]:
        conn.execute(
            "INSERT INTO highlights(id, source_id, content, note, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (ids[key], ids["book"], content, note, now, now),
        )
    for key, name in [("t1", "Stoicism"), ("t2", "draft")]:
        conn.execute(
            "INSERT INTO tags(id, name, name_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            (ids[key], name, name.lower(), now, now),
        )
        conn.execute("INSERT INTO highlight_tags VALUES (?, ?)", (ids["tagged"], ids[key]))
    conn.execute("UPDATE tags SET name = 'Resilience' WHERE id = ?", (ids["t2"],))
    conn.execute("UPDATE highlights SET deleted_at = ? WHERE id = ?", (now, ids["gone"]))
    return ids


def seq_of(conn: sqlite3.Connection, highlight_id: str) -> int:
    row = conn.execute("SELECT seq FROM highlights WHERE id = ?", (highlight_id,)).fetchone()
    return int(row[0])


def test_a_library_from_0012_is_searchable_by_every_column_after_the_upgrade(
    tmp_path: Path,
) -> None:
    path = tmp_path / "library.sqlite3"
    old = migrated_up_to(path, MIGRATION)
    ids = add_rows(old)
    before = old.execute(f"SELECT rowid, {ROW} FROM highlights_fts ORDER BY rowid").fetchall()
    old.close()

    library = Library.open(path)
    try:
        conn = library.connection()
        assert MIGRATION in {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
        after = conn.execute(f"SELECT rowid, {ROW} FROM highlights_fts ORDER BY rowid").fetchall()
        assert [tuple(row) for row in after] == [tuple(row) for row in before]
        conn.execute("INSERT INTO highlights_fts(highlights_fts) VALUES ('integrity-check')")
        tagged, plain = seq_of(conn, ids["tagged"]), seq_of(conn, ids["plain"])
        for query, expected in [
            ("obstacle", [tagged]),  # content
            ("reread", [tagged]),  # note
            ("stoicism", [tagged]),  # a tag
            ("resilience", [tagged]),  # a tag renamed before the upgrade
            ("aurelius", [tagged, plain]),  # the source's author
            ("meditations time", [plain]),  # source name and content together
            ("lanterns", []),  # deleted highlights stay out
        ]:
            assert sorted(keyword_ranking(conn, query, Filters(), 10)) == sorted(expected), query

        # Writes after the upgrade go through the new triggers and the flush.
        highlights.change_tags(library, ids["plain"], ["Patience"], add=True)
        with library.write() as write:
            write.execute("UPDATE tags SET name = 'Grit' WHERE id = ?", (ids["t1"],))
            write.execute("UPDATE sources SET author = 'Marcus' WHERE id = ?", (ids["book"],))
        assert keyword_ranking(conn, "patience", Filters(), 10) == [plain]
        assert keyword_ranking(conn, "grit", Filters(), 10) == [tagged]
        assert keyword_ranking(conn, "stoicism", Filters(), 10) == []
        assert keyword_ranking(conn, "aurelius", Filters(), 10) == []
        assert conn.execute("SELECT count(*) FROM highlights_fts_pending").fetchone()[0] == 0
    finally:
        library.close()


def test_rows_left_pending_by_a_writer_without_the_flush_are_written_at_open(
    tmp_path: Path,
) -> None:
    """An older copy of the program (or a raw SQL fix) commits writes without `Library.write`:
    the next open brings their keyword rows in."""
    path = tmp_path / "library.sqlite3"
    Library.open(path).close()
    raw = db.connect(path)
    now = clock.now()
    raw.execute(
        "INSERT INTO highlights(id, content, created_at, updated_at) VALUES (?, ?, ?, ?)",
        (str(uuid.uuid4()), "written behind the library's back", now, now),
    )
    assert raw.execute("SELECT count(*) FROM highlights_fts").fetchone()[0] == 0
    raw.close()
    library = Library.open(path)
    try:
        conn = library.connection()
        assert len(keyword_ranking(conn, "behind the back", Filters(), 10)) == 1
        assert conn.execute("SELECT count(*) FROM highlights_fts_pending").fetchone()[0] == 0
    finally:
        library.close()
