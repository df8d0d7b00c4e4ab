"""A library whose embedding queue stays full while a test looks at it: enough queued
highlights for search to speak of the backlog, and an embedder whose worker batches wait
for the test's release (a bound, not a timing)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from screvi_mcp.local.api.bodies import HighlightCreate
from screvi_mcp.local.search.backlog import SEARCH_NOTE_MIN_PENDING
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights as highlight_store

# Queued past the point where search reports the backlog.
BACKLOG = SEARCH_NOTE_MIN_PENDING + 10


class HeldEmbedder:
    """The real embedder; the worker's batches wait until the test releases them."""

    def __init__(self, real: object, release: threading.Event) -> None:
        self._real, self._release = real, release

    def embed(self, texts: list[str]) -> object:
        if len(texts) > 1:  # the worker's batches; a query (one text) goes through
            self._release.wait(60)  # a bound, not a timing: the test sets it when done
        return self._real.embed(texts)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)


def hold_backlog(path: Path, word: str, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """A library at `path` with `BACKLOG` highlights ("<word> note N.") that wait for their
    vectors until the returned event is set; set it before closing the app (closing waits
    for the worker's round)."""
    from screvi_mcp.local.search import embedder

    loaded = embedder.load_embedder
    release = threading.Event()
    monkeypatch.setattr(embedder, "load_embedder", lambda: HeldEmbedder(loaded(), release))
    library = Library.open(path)
    try:
        notes = [HighlightCreate(content=f"{word} note {n}.") for n in range(BACKLOG)]
        highlight_store.create_many(library, notes, bulk=True)
    finally:
        library.close()
    return release
