"""Values read from a library that stay valid until anything is committed to it.

Search reads a few small things on every query that change only when the library does: the
live sources and their words (named_sources.py), the ids of deleted sources and the
highlight count (keyword.py). Each is cached per connection (connections are per thread,
`Library.connection`) and read again once anything was committed since: by another
connection (`PRAGMA data_version` moves) or by this one (`total_changes` moves). Checking
costs one pragma, a few microseconds.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Entries per thread: (connection, version, value) by (id(connection), name), the connection
# held so that its id is not reused while cached. Past this many, the thread starts over.
_MAX_ENTRIES = 16
_local = threading.local()


def cached(conn: sqlite3.Connection, name: str, read: Callable[[sqlite3.Connection], T]) -> T:
    """`read(conn)`, or what it returned last on this connection if nothing was committed
    since."""
    version = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
    entries: dict[tuple[int, str], tuple[sqlite3.Connection, tuple[int, int], Any]]
    entries = _local.__dict__.setdefault("entries", {})
    entry = entries.get((id(conn), name))
    if entry is not None and entry[0] is conn and entry[1] == version:
        value: T = entry[2]
        return value
    value = read(conn)
    if len(entries) >= _MAX_ENTRIES:
        entries.clear()
    entries[(id(conn), name)] = (conn, version, value)
    return value
