"""Copying the write-ahead log back into the library file, off the requests' path.

SQLite's default checkpoints the WAL inside whichever commit takes it past 1,000 pages: that
request copies every page written since the last checkpoint into the main file and fsyncs
it. In a 100,000-highlight library a bulk create of 100 writes about 2 MiB of WAL, so every
second or third request paid a checkpoint of 60-900 ms (the profile behind issue 17: 2.3 s of
a 3.6 s run of 3,000 highlights was checkpoints).

Here a thread of the library does the same PASSIVE checkpoint (it never takes the write lock,
so writers go on meanwhile) after commits, and starts the WAL over once it is long. A commit
checkpoints itself only when the WAL file has passed `WAL_HARD_BYTES` (this thread fell
behind, or a long reader kept the WAL from being reused). Nothing about durability changes:
the checkpoint is SQLite's own, with the same syncs (`synchronous` stays NORMAL), and the WAL
is only reused after every frame in it has been copied and the main file synced; a process
killed mid-checkpoint replays the WAL on the next open.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from typing import TYPE_CHECKING

from screvi_mcp.local.storage import db

if TYPE_CHECKING:
    from screvi_mcp.local.storage.library import Library

log = logging.getLogger(__name__)

STOP_WAIT_SECONDS = 5.0  # a close waits this long for a checkpoint under way
# Past this many pages (16 MiB at 4 KiB) the WAL is started over from its beginning: see
# `_checkpoint`.
RESTART_PAGES = 4_096
# The bound on the WAL file, written in docs/reliability.md: a commit that finds it larger (this
# thread fell behind a stream of writes, or a reader held it) checkpoints and starts it over
# itself before it answers, waiting at most the busy timeout.
WAL_HARD_BYTES = 64 * 1024 * 1024
# A RESTART holds the write lock while it waits for readers still on the WAL: how long it may
# wait, from this thread and from a commit. Past it, it gives up and writers go on.
RESTART_WAIT_MS = 100
FORCED_RESTART_WAIT_MS = 1_000


class Checkpointer:
    """One background thread per opened library; `poke()` after a commit."""

    def __init__(self, library: Library) -> None:
        self._library = library
        self._wal_path = library.path.with_name(library.path.name + "-wal")
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._pass_lock = threading.Lock()  # held by whichever thread checkpoints
        self.passes = 0  # checkpoints run (for tests and the benchmark)
        self.restarts = 0  # of which the WAL was started over
        self.forced = 0  # checkpoints a commit ran itself, past WAL_HARD_BYTES
        # After a forced restart a long reader refused, the next is tried only once the WAL
        # has grown by another quarter of the bound: no commit waits for it twice in a row.
        self._force_past = WAL_HARD_BYTES

    def after_commit(self, conn: sqlite3.Connection) -> None:
        """Called by the writer after each commit, on its own connection."""
        try:
            size = os.stat(self._wal_path).st_size
        except OSError:
            size = 0  # no WAL file: nothing to bound
        if size > max(WAL_HARD_BYTES, self._force_past):
            self._restart_now(conn, size)
        self.poke()

    def _restart_now(self, conn: sqlite3.Connection, size: int) -> None:
        """Checkpoint and start the WAL over in the committing thread, within the busy timeout.

        SQLite answers "busy" at once, without waiting, to a second checkpointer: wait for
        this thread's pass first (it has copied most of the WAL by then). The write has
        committed whatever happens here, so a failure is logged, never raised: the request
        must not report a stored write as failed.
        """
        if not self._pass_lock.acquire(timeout=db.BUSY_TIMEOUT_MS / 1000):
            return
        try:
            busy = _restart(conn, FORCED_RESTART_WAIT_MS)
            self.forced += 1
            self._force_past = size + WAL_HARD_BYTES // 4 if busy else WAL_HARD_BYTES
        except sqlite3.Error as exc:
            log.warning("WAL checkpoint after a commit failed: %s", type(exc).__name__)
        finally:
            self._pass_lock.release()

    def poke(self) -> None:
        """Ask for a checkpoint soon; starts the thread on the first commit."""
        if self._thread is None:
            with self._start_lock:
                if self._stopping:
                    return
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="screvi-wal-checkpoint", daemon=True
                    )
                    self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        with self._start_lock:
            self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(STOP_WAIT_SECONDS)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping or self._library.closed:
                return
            # Commits that land while this pass runs set the event again: the next pass
            # takes all of them at once.
            try:
                with self._pass_lock:
                    self._checkpoint(self._library.connection())
            except (sqlite3.Error, RuntimeError) as exc:
                # A closed library, or a disk error the next write reports to its caller;
                # the commits' own bound (WAL_HARD_BYTES) still holds the WAL.
                log.warning("background WAL checkpoint failed: %s", type(exc).__name__)

    def _checkpoint(self, conn: sqlite3.Connection) -> None:
        """A PASSIVE pass; then, if the WAL has grown long, a RESTART one.

        Under a steady stream of writes a PASSIVE pass never catches up with the writer, and
        SQLite only starts the WAL over once every frame in it is copied: the file would grow
        for as long as the writes go on (180 MiB after 12,000 highlights at 100k). RESTART
        holds the writers back (they wait as for any write lock) while it copies what the
        PASSIVE pass left, a few commits' worth, and waits at most RESTART_WAIT_MS for
        readers, so the next writer starts the WAL over.
        """
        _busy, log_pages, _copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        self.passes += 1
        if log_pages >= RESTART_PAGES:
            _restart(conn, RESTART_WAIT_MS)
            self.restarts += 1


def _restart(conn: sqlite3.Connection, wait_ms: int) -> bool:
    """A RESTART checkpoint waiting at most `wait_ms` for locks; True when it gave up."""
    conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
    try:
        busy, _log, _copied = conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {db.BUSY_TIMEOUT_MS}")
    return bool(busy)
