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

# How long a claim holds before another process may take the rows over. A claimed chunk
# embeds in well under a second idle and a few seconds under heavy load; the lease is only
# felt after a crash, as that much delay for the rows the dead process held.
LEASE_SECONDS = 30.0


def new_claim_token() -> str:
    """Names one worker in `claim`: which process, and which index within it."""
    return f"{os.getpid()}:{uuid.uuid4().hex[:12]}"


def claim(conn: sqlite3.Connection, token: str, limit: int) -> list[int]:
    """Take up to `limit` unclaimed (or abandoned) rows, newest first. Call inside a write
    transaction, so that two processes never claim the same row."""
    now = time.time()
    seqs = [
        int(row[0])
        for row in conn.execute(
            "SELECT seq FROM embedding_queue WHERE claimed_until IS NULL OR claimed_until < ?"
            " ORDER BY ticket DESC LIMIT ?",
            (now, limit),
        )
    ]
    if seqs:
        conn.execute(
            "UPDATE embedding_queue SET claim = ?, claimed_until = ?"
            " WHERE seq IN (SELECT value FROM json_each(?))",
            (token, now + LEASE_SECONDS, json.dumps(seqs)),
        )
    return seqs


def claimable(conn: sqlite3.Connection) -> bool:
    """Whether any row waits that a worker may claim now."""
    row = conn.execute(
        "SELECT 1 FROM embedding_queue WHERE claimed_until IS NULL OR claimed_until < ? LIMIT 1",
        (time.time(),),
    ).fetchone()
    return row is not None


def finish(conn: sqlite3.Connection, token: str, seqs: list[int]) -> None:
    """Remove those of `seqs` this worker still holds: their vectors are stored (or they need
    none). A row queued again since the claim (an edit) carries no claim and stays."""
    conn.execute(
        "DELETE FROM embedding_queue WHERE claim = ? AND seq IN (SELECT value FROM json_each(?))",
        (token, json.dumps(seqs)),
    )


def release(conn: sqlite3.Connection, token: str) -> None:
    """Hand back whatever this worker still holds, for the next round."""
    conn.execute(
        "UPDATE embedding_queue SET claim = NULL, claimed_until = NULL WHERE claim = ?", (token,)
    )


def enqueue(conn: sqlite3.Connection, seqs: list[int]) -> None:
    """Queue `seqs` (again) for embedding; call inside a write transaction."""
    conn.execute(
        "INSERT OR REPLACE INTO embedding_queue(seq, ticket)"
        " SELECT value, (SELECT coalesce(max(ticket), 0) FROM embedding_queue) + key + 1"
        " FROM json_each(?)",
        (json.dumps(seqs),),
    )


def queued_among(conn: sqlite3.Connection, seqs: list[int]) -> set[int]:
    rows = conn.execute(
        "SELECT seq FROM embedding_queue WHERE claim IS NULL"
        " AND seq IN (SELECT value FROM json_each(?))",
        (json.dumps(seqs),),
    )
    return {int(row[0]) for row in rows}


def pending(conn: sqlite3.Connection) -> int:
    """How many highlights wait for a vector (claimed or not)."""
    return int(conn.execute("SELECT count(*) FROM embedding_queue").fetchone()[0])
