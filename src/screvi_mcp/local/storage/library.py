"""A library: one SQLite file, its connections and its settings.

Each thread gets its own connection (SQLite connections are cheap, and WAL lets readers run
beside the single writer). Writers take `BEGIN IMMEDIATE` through `db.transaction`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from screvi_mcp.local.storage import db, keyword_rows
from screvi_mcp.local.storage.checkpointer import Checkpointer
from screvi_mcp.local.storage.store import passages as passage_rows


class HighlightListener(Protocol):
    """Told, after each commit, which highlights changed: how derived indexes stay in sync.

    `seqs` are `highlights.seq` values. "Changed" covers creation, edits of content or note,
    and renames of their source; "removed" covers soft deletion.
    """

    def highlights_changed(self, library: Library, seqs: list[int]) -> None: ...

    def highlights_removed(self, library: Library, seqs: list[int]) -> None: ...


def _create_private(path: Path) -> None:
    """Create an empty file readable by its owner only; SQLite gives the WAL files beside it
    the same mode. A file another process created meanwhile is left as it is."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


class Library:
    """An opened library file. Create with `Library.open(path)`; close when done."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        # Each connection with the thread that made it (and alone uses it).
        self._connections: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._lock = threading.Lock()
        self.closed = False
        self.listeners: list[HighlightListener] = []
        self._close_hooks: list[Callable[[], None]] = []
        self._flush_keyword_rows = True
        self._flush_passages = True
        # Called after a commit that wrote article passages (the passage index's worker).
        self.passage_listeners: list[Callable[[], None]] = []
        self.checkpointer = Checkpointer(self)
        self._close_hooks.append(self.checkpointer.stop)
        # The connection for reads run on an event loop (see `reads_without_waiting`).
        self._no_wait_conn: sqlite3.Connection | None = None
        self._no_wait_lock = threading.Lock()

    @classmethod
    def open(cls, path: Path | str) -> Library:
        path = Path(path).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            _create_private(path)
        db.check_is_library(path)  # before the first connection, which writes to the file
        library = cls(path)
        db.migrate(library.connection())
        # Only a file migrated by an older copy of the schema (tests pin one) lacks the table.
        library._flush_keyword_rows = keyword_rows.deferred(library.connection())
        library._flush_passages = passage_rows.tracked(library.connection())
        if (library._flush_keyword_rows and keyword_rows.has_pending(library.connection())) or (
            library._flush_passages and passage_rows.has_pending(library.connection())
        ):
            with library.write():
                pass  # the write's flush brings the keyword index and passages up to date
        return library

    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the library."""
        if self.closed:
            raise RuntimeError("the library is closed")
        lent: sqlite3.Connection | None = getattr(self._local, "no_wait", None)
        if lent is not None:
            return lent
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = db.connect(self.path)
            self._local.conn = conn
            with self._lock:
                self._connections.append((threading.current_thread(), conn))
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection inside a write transaction.

        The keyword rows its writes changed are rewritten just before it commits (once each,
        however many writes touched them: see local/storage/keyword_rows.py), and so are the
        passages of articles whose text changed (local/storage/store/passages.py).
        """
        with db.transaction(self.connection()) as conn:
            yield conn
            if self._flush_keyword_rows:
                keyword_rows.flush(conn)
            passages = passage_rows.flush(conn) if self._flush_passages else 0
        # Committed: the WAL's pages go back into the file on the checkpointer's thread, not
        # in this request, unless the WAL is past its bound (see local/storage/checkpointer.py).
        self.checkpointer.after_commit(conn)
        if passages:
            for listener in self.passage_listeners:
                listener()

    def prepare_reads_without_waiting(self) -> None:
        """Open the connection `reads_without_waiting` lends. Call it off the event loop:
        opening one may wait (for the WAL switch of a fresh file)."""
        if self._no_wait_conn is not None or self.closed:
            return
        conn = db.connect(self.path)
        # SQLite fails at once ("database is locked") where it would otherwise wait.
        conn.execute("PRAGMA busy_timeout = 0")
        with self._no_wait_lock:
            if self._no_wait_conn is None and not self.closed:
                self._no_wait_conn = conn
                return
        conn.close()  # another thread prepared it meanwhile, or the library closed

    @contextmanager
    def reads_without_waiting(self) -> Iterator[bool]:
        """Within the block, this thread's `connection()` never waits for a lock: a statement
        that would wait raises `sqlite3.OperationalError` (database is locked) instead.

        For short reads on an event loop, where the hop to a worker thread costs more than
        the read (`get_highlight`: 0.1 ms read, about 0.5 ms hop under load). Yields False
        (use a worker thread) when the connection is not prepared yet or another thread is
        using it. Never write inside: a write may wait for the fsync of a checkpoint.
        """
        if self._no_wait_conn is None or not self._no_wait_lock.acquire(blocking=False):
            yield False
            return
        try:
            conn = self._no_wait_conn
            if conn is None or self.closed:
                yield False
                return
            self._local.no_wait = conn
            try:
                yield True
            finally:
                self._local.no_wait = None
        finally:
            self._no_wait_lock.release()

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = (
            self.connection().execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        )
        return default if row is None else str(row[0])

    def set_setting(self, key: str, value: str) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def setting_once(self, key: str, make: Callable[[], str]) -> str:
        """The setting `key`, stored as `make()` the first time it is asked for. Two
        processes asking at once get the same value: the first one stored stays."""
        value = self.get_setting(key)
        if value is None:
            with self.write() as conn:
                conn.execute(
                    "INSERT OR IGNORE INTO settings(key, value) VALUES (?, ?)", (key, make())
                )
            value = self.get_setting(key)
        assert value is not None
        return value

    def make_private(self) -> None:
        """Owner-only access to the file and its WAL files (it holds a plaintext key)."""
        if os.name != "posix":
            return
        for suffix in ("", "-wal", "-shm"):
            sibling = self.path.with_name(self.path.name + suffix)
            with contextlib.suppress(OSError):  # absent, or not ours to change: leave it
                if sibling.stat().st_mode & 0o077:
                    sibling.chmod(sibling.stat().st_mode & 0o700)

    def add_listener(self, listener: HighlightListener) -> None:
        self.listeners.append(listener)

    def notify_changed(self, seqs: list[int]) -> None:
        if seqs:
            for listener in self.listeners:
                listener.highlights_changed(self, seqs)

    def notify_removed(self, seqs: list[int]) -> None:
        if seqs:
            for listener in self.listeners:
                listener.highlights_removed(self, seqs)

    def on_close(self, hook: Callable[[], None]) -> None:
        """Run `hook` when the library closes, before its connections do: how a background
        thread (the embedding queue's) is stopped before its connection goes away."""
        self._close_hooks.append(hook)

    def close(self) -> None:
        # Hooks first, while their threads can still hand back what they hold.
        for hook in self._close_hooks:
            hook()
        self._close_hooks.clear()
        self.closed = True
        with self._no_wait_lock:  # held only for the length of one read
            if self._no_wait_conn is not None:
                self._no_wait_conn.close()
                self._no_wait_conn = None
        with self._lock:
            for owner, conn in self._connections:
                # Another thread still running may be inside a statement on its connection
                # right now (it checked `closed` a moment before this): closing it under that
                # thread crashes the process (a segfault in SQLite, seen in CI). Such a
                # connection is closed when its thread ends and drops its thread-local copy;
                # `connection()` refuses that thread any further use.
                if owner is threading.current_thread() or not owner.is_alive():
                    with contextlib.suppress(sqlite3.ProgrammingError):
                        conn.close()
            self._connections.clear()
