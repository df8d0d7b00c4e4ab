"""Migration 0010: highlights saved standalone before it (no source) join Personal notes."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from screvi_mcp.local.storage import clock, db
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights

MIGRATION = "0010_standalone_under_self.sql"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def library_before_the_migration(path: Path, standalone: int) -> None:
    conn = db.connect(path)
    conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    for name, sql in db.migration_steps():
        if name >= MIGRATION:
            break
        conn.executescript(f"BEGIN;\n{sql}\nCOMMIT;")
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (name, clock.now()))
    for index in range(standalone):
        now = clock.now()
        conn.execute(
            "INSERT INTO highlights(id, content, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (str(uuid.uuid4()), f"an old note {index}", now, now),
        )
    conn.close()


def test_old_standalone_highlights_join_one_new_personal_notes_source(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    library_before_the_migration(path, standalone=3)
    library = Library.open(path)
    try:
        conn = library.connection()
        sources = conn.execute("SELECT * FROM sources WHERE type = 'self'").fetchall()
        assert len(sources) == 1
        source = sources[0]
        assert source["name"] == "Personal notes"
        assert UUID4.match(source["id"]) and TIMESTAMP.match(source["created_at"])
        assert (
            conn.execute("SELECT count(*) FROM highlights WHERE source_id IS NULL").fetchone()[0]
            == 0
        )
        listed = highlights.get(conn, conn.execute("SELECT id FROM highlights").fetchone()[0])
        assert listed["source"]["id"] == source["id"]
        # Found by the source's name too: the keyword index followed the move.
        found = conn.execute(
            "SELECT count(*) FROM highlights_fts WHERE highlights_fts MATCH 'personal'"
        ).fetchone()[0]
        assert found == 3
    finally:
        library.close()


def test_a_library_without_standalone_highlights_gets_no_source(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    library_before_the_migration(path, standalone=0)
    library = Library.open(path)
    try:
        assert library.connection().execute("SELECT count(*) FROM sources").fetchone()[0] == 0
    finally:
        library.close()
