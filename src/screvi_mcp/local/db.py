"""Opening the library's SQLite file: pragmas and numbered migrations.

Migrations are plain SQL files in `migrations/`, applied in file-name order and recorded by
name in `schema_migrations`, so that independent modules can each add their own step.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from screvi_mcp.local import clock

BUSY_TIMEOUT_MS = 10_000


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
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def migration_steps() -> list[tuple[str, str]]:
    """(name, sql) of every bundled migration, in order."""
    folder = resources.files("screvi_mcp.local") / "migrations"
    steps = [
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".sql")
    ]
    return sorted(steps)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations this file has not seen yet; returns the names applied."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    applied: list[str] = []
    for name, sql in migration_steps():
        if name in done:
            continue
        # executescript commits first; wrap the step so it lands whole or not at all.
        conn.executescript(
            "BEGIN IMMEDIATE;\n"
            + sql
            + f"\nINSERT INTO schema_migrations(name, applied_at) VALUES ('{name}', "
            f"'{clock.now()}');\nCOMMIT;"
        )
        applied.append(name)
    return applied


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
