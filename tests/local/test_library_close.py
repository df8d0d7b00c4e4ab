"""Closing a library while another thread is still using its connection."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from screvi_mcp.local.storage.library import Library


def test_close_leaves_a_running_threads_connection_to_that_thread(tmp_path: Path) -> None:
    """A worker that took its connection just before `close()` may be inside a statement on
    it: closing it from under that thread crashed the process (a segfault in CI). The thread
    finishes what it started; only new use is refused."""
    library = Library.open(tmp_path / "library.sqlite3")
    took_connection = threading.Event()
    library_closed = threading.Event()
    outcome: list[object] = []

    def worker() -> None:
        conn = library.connection()
        took_connection.set()
        library_closed.wait(10)
        try:
            outcome.append(conn.execute("SELECT count(*) FROM highlights").fetchone()[0])
        except Exception as error:  # what closing under the thread did before the fix
            outcome.append(error)
        try:
            library.connection()
        except RuntimeError as error:
            outcome.append(error)

    thread = threading.Thread(target=worker)
    thread.start()
    assert took_connection.wait(10)
    library.close()
    library_closed.set()
    thread.join(10)
    assert outcome[0] == 0
    assert isinstance(outcome[1], RuntimeError) and "closed" in str(outcome[1])


def test_close_closes_this_threads_connection(tmp_path: Path) -> None:
    library = Library.open(tmp_path / "library.sqlite3")
    conn = library.connection()
    library.close()
    with pytest.raises(Exception, match="closed"):
        conn.execute("SELECT 1")
