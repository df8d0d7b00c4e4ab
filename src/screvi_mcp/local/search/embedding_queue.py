"""The `embedding_queue` table (migration 0008): highlights whose vector is still to be made.

Triggers fill it in the writing transaction; the index's background worker claims rows, embeds
them and removes them in the transaction that stores their vectors. A claim is a lease: a
process that dies holding one loses it after `LEASE_SECONDS`, and the rows go to whoever asks
next. Nothing here needs numpy.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid

from screvi_mcp.local.search.vector_tables import MINILM_TABLES, VectorTables

# How long a claim holds before another process may take the rows over. A claimed chunk
# embeds in well under a second idle and a few seconds under heavy load; the lease is only
# felt after a crash, as that much delay for the rows the dead process held.
LEASE_SECONDS = 30.0


def new_claim_token() -> str:
    """Names one worker in `claim`: which process, and which index within it."""
    return f"{os.getpid()}:{uuid.uuid4().hex[:12]}"


def claim(
    conn: sqlite3.Connection, token: str, limit: int, tables: VectorTables = MINILM_TABLES
) -> list[int]:
    """Take up to `limit` unclaimed (or abandoned) rows, newest first. Call inside a write
    transaction, so that two processes never claim the same row."""
    now = time.time()
    seqs = [
        int(row[0])
        for row in conn.execute(
            f"SELECT seq FROM {tables.queue} WHERE claimed_until IS NULL OR claimed_until < ?"
            " ORDER BY ticket DESC LIMIT ?",
            (now, limit),
        )
    ]
    if seqs:
        conn.execute(
            f"UPDATE {tables.queue} SET claim = ?, claimed_until = ?"
            " WHERE seq IN (SELECT value FROM json_each(?))",
            (token, now + LEASE_SECONDS, json.dumps(seqs)),
        )
    return seqs


def claimable(conn: sqlite3.Connection, tables: VectorTables = MINILM_TABLES) -> bool:
    """Whether any row waits that a worker may claim now."""
    row = conn.execute(
        f"SELECT 1 FROM {tables.queue} WHERE claimed_until IS NULL OR claimed_until < ? LIMIT 1",
        (time.time(),),
    ).fetchone()
    return row is not None


def finish(
    conn: sqlite3.Connection, token: str, seqs: list[int], tables: VectorTables = MINILM_TABLES
) -> None:
    """Remove those of `seqs` this worker still holds: their vectors are stored (or they need
    none). A row queued again since the claim (an edit) carries no claim and stays."""
    conn.execute(
        f"DELETE FROM {tables.queue} WHERE claim = ? AND seq IN (SELECT value FROM json_each(?))",
        (token, json.dumps(seqs)),
    )


def release(conn: sqlite3.Connection, token: str, tables: VectorTables = MINILM_TABLES) -> None:
    """Hand back whatever this worker still holds, for the next round."""
    conn.execute(
        f"UPDATE {tables.queue} SET claim = NULL, claimed_until = NULL WHERE claim = ?", (token,)
    )


def enqueue(
    conn: sqlite3.Connection, seqs: list[int], tables: VectorTables = MINILM_TABLES
) -> None:
    """Queue `seqs` (again) for embedding; call inside a write transaction."""
    conn.execute(
        f"INSERT OR REPLACE INTO {tables.queue}(seq, ticket)"
        f" SELECT value, (SELECT coalesce(max(ticket), 0) FROM {tables.queue}) + key + 1"
        " FROM json_each(?)",
        (json.dumps(seqs),),
    )


def queued_among(
    conn: sqlite3.Connection, seqs: list[int], tables: VectorTables = MINILM_TABLES
) -> set[int]:
    """Those of `seqs` waiting unclaimed. A claimed row counts as not queued here: a change
    committed after its claim must queue it again (see `SemanticIndex.highlights_changed`)."""
    rows = conn.execute(
        f"SELECT seq FROM {tables.queue} WHERE claim IS NULL"
        " AND seq IN (SELECT value FROM json_each(?))",
        (json.dumps(seqs),),
    )
    return {int(row[0]) for row in rows}


def in_queue(
    conn: sqlite3.Connection, seqs: list[int], tables: VectorTables = MINILM_TABLES
) -> set[int]:
    """Those of `seqs` in the queue, claimed or not: what a sweep for highlights lacking a
    vector must leave alone (a claimed row is being embedded, or its lease runs out)."""
    rows = conn.execute(
        f"SELECT seq FROM {tables.queue} WHERE seq IN (SELECT value FROM json_each(?))",
        (json.dumps(seqs),),
    )
    return {int(row[0]) for row in rows}


def pending(conn: sqlite3.Connection, tables: VectorTables = MINILM_TABLES) -> int:
    """How many highlights wait for a vector (claimed or not)."""
    return int(conn.execute(f"SELECT count(*) FROM {tables.queue}").fetchone()[0])
