"""A mirror's identity (which account it copies) and the sync's resume points."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from screvi_mcp.local.storage.library import Library

STATE_BASE_URL = "base_url"
STATE_KEY_FINGERPRINT = "key_fingerprint"
# When the last sync finished: written by the sync, read by `check` (which must not load
# the sync engine and its client to read it) and by mirror serving.
STATE_LAST_SYNC = "last_sync_at"


def read_state(conn: sqlite3.Connection) -> dict[str, str]:
    return {row[0]: row[1] for row in conn.execute("SELECT key, value FROM mirror_state")}


def is_mirror(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute("SELECT 1 FROM mirror_state WHERE key = ?", (STATE_BASE_URL,)).fetchone()
        is not None
    )


def write_state_in(conn: sqlite3.Connection, state: Mapping[str, str | None]) -> None:
    for key, value in state.items():
        if value is None:
            conn.execute("DELETE FROM mirror_state WHERE key = ?", (key,))
        else:
            conn.execute(
                "INSERT INTO mirror_state(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )


def write_state(library: Library, state: Mapping[str, str | None]) -> None:
    """Set (or, for None, clear) mirror state entries in one transaction."""
    with library.write() as conn:
        write_state_in(conn, state)


def holds_data(conn: sqlite3.Connection) -> bool:
    """Whether the library has any tag, source or highlight (a mirror must start empty)."""
    return any(
        conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None
        for table in ("tags", "sources", "highlights")
    )
