"""Article passages' rows: rebuilt inside the writing transaction, read by passage search.

The triggers of migration 0016 record which articles' text (or title) a write changed in
`article_passages_pending`; `flush` rebuilds their passages and keyword rows just before
`Library.write` commits, and queues the new passages for vectors in the same transaction
(the embedding queue's worker embeds them after the commit, as for highlights). Readers thus
never see passages out of step with the body `read_article` serves.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from screvi_mcp.local.passages.split import split_passages
from screvi_mcp.local.passages.tables import MULTILINGUAL, PASSAGE_TABLES, PASSAGE_TEXT_SAMPLE
from screvi_mcp.local.search import embedding_queue
from screvi_mcp.local.search.language import is_english


def tracked(conn: sqlite3.Connection) -> bool:
    """Whether this file has passages (migration 0016 applied)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'article_passages_pending'"
    ).fetchone()
    return row is not None


def has_pending(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM article_passages_pending LIMIT 1").fetchone() is not None


# Articles rebuilt per transaction at most: a write never pays for a large backlog (a library
# migrated to 0016 with thousands of bodies); `drain` works the backlog off in such steps.
FLUSH_LIMIT = 50


def flush(conn: sqlite3.Connection, limit: int = FLUSH_LIMIT) -> int:
    """Rebuild the passages of pending articles, newest first (those this transaction wrote
    are among them); returns how many passages were written (0, after one indexed lookup, in
    most transactions)."""
    pending = [
        str(r[0])
        for r in conn.execute(
            "SELECT article_id FROM article_passages_pending ORDER BY rowid DESC LIMIT ?",
            (limit,),
        )
    ]
    if not pending:
        return 0
    written: list[int] = []
    foreign: list[int] = []  # passages of non-English articles: the multilingual model's too
    for article_id in pending:
        ids, english = _rebuild(conn, article_id)
        written.extend(ids)
        if not english:
            foreign.extend(ids)
    conn.execute(
        "DELETE FROM article_passages_pending WHERE article_id IN (SELECT value FROM json_each(?))",
        (json.dumps(pending),),
    )
    if written:
        embedding_queue.enqueue(conn, written, PASSAGE_TABLES)
    if foreign:
        embedding_queue.enqueue(conn, foreign, MULTILINGUAL)
    return len(written)


def _rebuild(conn: sqlite3.Connection, article_id: str) -> tuple[list[int], bool]:
    """The article's passages cut again; their ids, and whether the article is English."""
    conn.execute(
        "DELETE FROM article_passages_fts WHERE rowid IN "
        "(SELECT id FROM article_passages WHERE article_id = ?)",
        (article_id,),
    )
    # Their vectors and queue rows go with them (ON DELETE CASCADE), logged for other processes.
    conn.execute("DELETE FROM article_passages WHERE article_id = ?", (article_id,))
    row = conn.execute(
        "SELECT content_text, title FROM articles WHERE source_id = ?", (article_id,)
    ).fetchone()
    if row is None or not row[0]:
        return [], True
    text, title = str(row[0]), row[1] or ""
    english = is_english(text[:PASSAGE_TEXT_SAMPLE])
    ids: list[int] = []
    for ordinal, span in enumerate(split_passages(text)):
        piece = text[span.start : span.end]
        cursor = conn.execute(
            "INSERT INTO article_passages(article_id, ordinal, start, length, text, english) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (article_id, ordinal, span.start, span.length, piece, int(english)),
        )
        assert cursor.lastrowid is not None
        ids.append(cursor.lastrowid)
        conn.execute(
            "INSERT INTO article_passages_fts(rowid, text, title) VALUES (?, ?, ?)",
            (cursor.lastrowid, piece, title),
        )
    return ids, english


def waiting(conn: sqlite3.Connection) -> int:
    """Passages queued for a vector (0 in a file without passages)."""
    if not tracked(conn):
        return 0
    return embedding_queue.pending(conn, PASSAGE_TABLES)


def texts(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """The text of those of `ids` that still exist."""
    rows = conn.execute(
        "SELECT id, text FROM article_passages WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(ids),),
    )
    return {int(r[0]): str(r[1]) for r in rows}


def rows(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Passage id -> its article id, ordinal, start, length and text."""
    found = conn.execute(
        "SELECT id, article_id, ordinal, start, length, text FROM article_passages "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(ids),),
    )
    return {int(r[0]): dict(r) for r in found}
