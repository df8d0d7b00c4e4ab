"""search_highlights tells the agent when recent highlights are not searchable by meaning
yet (issue 31, item 13), and says nothing when the queue is empty."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from server_testkit import call_ok, mcp_client

from screvi_mcp.local.api.bodies import HighlightCreate
from screvi_mcp.local.search.backlog import SEARCH_NOTE_MIN_PENDING
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights as highlight_store

pytest.importorskip("onnxruntime", reason="the worker needs the `local` extra")


class _Held:
    """The real embedder; the worker's batches wait until the test releases them."""

    def __init__(self, real: object, release: threading.Event) -> None:
        self._real, self._release = real, release

    def embed(self, texts: list[str]) -> object:
        if len(texts) > 1:  # the worker's batches; a query (one text) goes through
            self._release.wait(60)  # a bound, not a timing: the test sets it when done
        return self._real.embed(texts)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)


async def test_the_search_tool_says_how_many_wait_for_a_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import embedder

    loaded = embedder.load_embedder
    release = threading.Event()
    monkeypatch.setattr(embedder, "load_embedder", lambda: _Held(loaded(), release))
    path = tmp_path / "library.sqlite3"
    library = Library.open(path)
    count = SEARCH_NOTE_MIN_PENDING + 10
    highlight_store.create_many(
        library, [HighlightCreate(content=f"Harbour note {n}.") for n in range(count)], bulk=True
    )
    library.close()
    async with mcp_client(path) as client:
        try:
            text = await call_ok(client, "search_highlights", {"query": "harbour"})
        finally:
            release.set()  # before closing, which waits for the worker's round
    assert "not searchable by meaning yet" in text
    assert "keyword matches include them" in text
