"""Opening the library's SQLite file: pragmas and numbered migrations.

Migrations are plain SQL files in `migrations/`, applied in file-name order and recorded by
name in `schema_migrations`, so that independent modules can each add their own step.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from screvi_mcp.local.storage import clock

BUSY_TIMEOUT_MS = 10_000
# The WAL is checkpointed by a background thread after commits (local/storage/checkpointer.py); a
# commit checkpoints it itself only past this many pages (64 MiB at 4 KiB pages), SQLite's
# default being 1,000. After a checkpoint has caught up, the file is cut back to
# WAL_KEEP_BYTES the next time it is reused.
WAL_HARD_PAGES = 16_384
WAL_KEEP_BYTES = 16 * 1024 * 1024


def connect(path: Path) -> sqlite3.Connection:
    """A connection with the pragmas every connection of the library needs."""
    conn = sqlite3.connect(
        path,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,  # explicit BEGIN/COMMIT: we decide where transactions start
        check_same_thread=False,
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    _enter_wal(conn)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_HARD_PAGES}")
    conn.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    return conn


def _enter_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting out another process doing the same on a fresh file.

    Two connections converting a new file at once both read it, then both need it alone;
    SQLite answers one of them "database is locked" at once instead of calling the busy
    handler (it would otherwise deadlock). That connection simply tries again, within the
    same bound as any other wait for the lock.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def migration_steps() -> list[tuple[str, str]]:
    """(name, sql) of every bundled migration, in order."""
    folder = resources.files("screvi_mcp.local.storage") / "migrations"
    steps = [
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".sql")
    ]
    return sorted(steps)


def statements(script: str) -> Iterator[str]:
    """The complete SQL statements of a script (trigger bodies hold `;` and stay whole)."""
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \t\r\n;"):
                yield buffer
            buffer = ""
    # A trailing fragment without `;` is a comment or whitespace (sqlite would ignore it).


def migrate(conn: sqlite3.Connection, steps: list[tuple[str, str]] | None = None) -> list[str]:
    """Apply the migrations this file has not seen yet; returns the names applied.
    `steps` narrows them (review's own state file takes only its own step).

    All pending steps run in one write transaction, and the list of applied steps is read
    inside it: several processes opening a fresh file at once queue on the lock, and each
    finds the work the one before it did (no `table settings already exists`). A failed step
    rolls every pending step back, so a file is never left half-migrated.
    """
    steps = migration_steps() if steps is None else steps
    if _pending(conn, steps) == []:
        return []  # the common case: no write lock taken just to open a library
    applied: list[str] = []
    with transaction(conn):
        for name, sql in _pending(conn, steps):
            for statement in statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                (name, clock.now()),
            )
            applied.append(name)
    return applied


def _pending(conn: sqlite3.Connection, steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Steps not recorded yet; the bookkeeping table is created when missing."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    return [(name, sql) for name, sql in steps if name not in done]


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction taken up front (BEGIN IMMEDIATE) to avoid upgrade deadlocks."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
