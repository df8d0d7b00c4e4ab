"""Waiting for a library's embedding queue to drain, from any process.

Writes answer at commit and embed afterwards (local/search/embedding_worker.py): a test that
creates highlights and then searches by meaning waits here first. It reads the queue table
of the library file directly, so it works for an in-process app and for a server in another
process alike; the next search picks the stored vectors up by itself.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path


def pending_embeddings(path: Path | str) -> int:
    with sqlite3.connect(path, timeout=10) as conn:
        return int(conn.execute("SELECT count(*) FROM embedding_queue").fetchone()[0])


def wait_until_embedded(path: Path | str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while pending_embeddings(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"{pending_embeddings(path)} highlights still not embedded")
        time.sleep(0.02)


async def async_wait_until_embedded(path: Path | str, timeout: float = 60.0) -> None:
    import anyio

    await anyio.to_thread.run_sync(wait_until_embedded, path, timeout)
