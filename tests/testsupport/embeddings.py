"""Embeddings in tests: waiting for a library's queue to drain, and one model per process.

Writes answer at commit and embed afterwards (local/search/embedding_worker.py): a test that
creates highlights and then searches by meaning waits here first. It reads the queue table
of the library file directly, so it works for an in-process app and for a server in another
process alike; the next search picks the stored vectors up by itself.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from testsupport.polling import wait_until

# Chosen once for the run by tests/conftest.py; kept when a test clears the SCREVI_ settings.
ENGLISH_MODEL = "SCREVI_ENGLISH_MODEL"


def pending_embeddings(path: Path | str) -> int:
    with sqlite3.connect(path, timeout=10) as conn:
        return int(conn.execute("SELECT count(*) FROM embedding_queue").fetchone()[0])


def wait_until_embedded(path: Path | str, timeout: float = 60.0) -> None:
    wait_until(
        lambda: not pending_embeddings(path),
        timeout=timeout,
        what=lambda: f"{pending_embeddings(path)} highlights still not embedded",
        every=0.02,
    )


async def async_wait_until_embedded(path: Path | str, timeout: float = 60.0) -> None:
    import anyio

    await anyio.to_thread.run_sync(wait_until_embedded, path, timeout)


_EMBEDDERS: dict[tuple[str, str], Any] = {}


def share_one_embedding_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Load the semantic-search model once per process rather than once per app start.

    Each test starts a fresh app over a fresh library, and the app attaches the semantic
    index at start-up; the model holds no library state, so sharing it only saves time. The
    patch lives for one test at a time, and the cache is keyed by the settings that choose the
    model (its folder, the English model). Without the `local` extra nothing is patched.
    """
    try:
        from screvi_mcp.local.search import embedder
    except ImportError:
        return
    original = embedder.load_embedder

    def load_once() -> Any:
        key = (os.environ.get(embedder.MODEL_DIR_ENV, ""), os.environ.get(ENGLISH_MODEL, ""))
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = original()
        return _EMBEDDERS[key]

    monkeypatch.setattr(embedder, "load_embedder", load_once)
