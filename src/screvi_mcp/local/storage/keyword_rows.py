"""Writing the keyword index's rows: once per transaction, just before it commits.

The triggers of migration 0013 record in `highlights_fts_pending` the seq of every highlight
whose keyword row a write changed (its text, its source's name, its tags, ...). `flush`
rewrites those rows from `highlights_fts_rows` (the view that says what a row holds) and
empties the table. `Library.write` calls it before every commit, so readers only ever see an
index in step with the rows; a highlight created with three tags is tokenised once instead of
seven times.
"""

from __future__ import annotations

import sqlite3

_COLUMNS = "content, note, source_name, source_author, tags"


def flush(conn: sqlite3.Connection) -> int:
    """Rewrite the pending keyword rows inside the caller's transaction; returns how many.

    Costs one indexed lookup when nothing is pending (most transactions: embeddings,
    settings, article fetches).
    """
    if conn.execute("SELECT 1 FROM highlights_fts_pending LIMIT 1").fetchone() is None:
        return 0
    # FTS5 answers `rowid IN (...)` with one rowid lookup per pending seq, not a scan.
    conn.execute(
        "DELETE FROM highlights_fts WHERE rowid IN (SELECT seq FROM highlights_fts_pending)"
    )
    # A seq whose highlight is gone (a hard delete) finds no row here: its old row just goes.
    written = conn.execute(
        f"INSERT INTO highlights_fts(rowid, {_COLUMNS}) "
        f"SELECT seq, {_COLUMNS} FROM highlights_fts_rows "
        "WHERE seq IN (SELECT seq FROM highlights_fts_pending) ORDER BY seq"
    ).rowcount
    conn.execute("DELETE FROM highlights_fts_pending")
    return written


def deferred(conn: sqlite3.Connection) -> bool:
    """Whether this file's triggers defer keyword rows (migration 0013 applied)."""
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'highlights_fts_pending'"
        ).fetchone()
        is not None
    )


def has_pending(conn: sqlite3.Connection) -> bool:
    """Whether rows wait for a flush outside any transaction: a writer that committed
    without `Library.write` (an older version of this program on the same file)."""
    return conn.execute("SELECT 1 FROM highlights_fts_pending LIMIT 1").fetchone() is not None
