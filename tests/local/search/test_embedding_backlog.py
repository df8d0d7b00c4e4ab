"""Search says how far meaning lags behind writes (issue 31, item 13): under sustained bulk
writes the queue grew and search by meaning lagged by minutes while results looked complete."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from screvi_mcp.client.client import ScreviClient
from screvi_mcp.local.api import keys
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.api.bodies import HighlightCreate
from screvi_mcp.local.search.backlog import (
    SEARCH_NOTE_MIN_PENDING,
    Backlog,
    Throughput,
    embedding_backlog,
)
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights as highlight_store
from testsupport.backlog import hold_backlog

pytest.importorskip("onnxruntime", reason="the worker needs the `local` extra")


def test_the_backlog_counts_the_queue_and_estimates_the_lag(tmp_path: Path) -> None:
    library = Library.open(tmp_path / "library.sqlite3")
    try:
        highlight_store.create_many(
            library, [HighlightCreate(content=f"Passage {n}.") for n in range(120)], bulk=True
        )
        backlog = embedding_backlog(library)  # no index attached: nobody measured a rate
        assert backlog == Backlog(pending=120, per_second=None)
        assert backlog.lag_seconds is None and backlog.header() == "pending=120"
    finally:
        library.close()
    clock = [0.0]
    rate = Throughput(clock=lambda: clock[0])
    rate.note(100, 1.0)
    clock[0] = 30.0
    rate.note(100, 1.0)
    assert rate.per_second() == pytest.approx(100.0)
    assert Backlog(pending=500, per_second=100.0).lag_seconds == pytest.approx(5.0)
    assert Backlog(pending=500, per_second=100.0).header() == "pending=500; lag=5"
    clock[0] = 100.0
    rate.note(10, 1.0)  # the old rounds left the window
    assert rate.per_second() == pytest.approx(10.0)


async def test_search_results_say_meaning_lags_when_many_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "library.sqlite3"
    release = hold_backlog(path, "Tide", monkeypatch)
    library = Library.open(path)
    _, secret = keys.create_key(library, "tests", write=True)
    library.close()
    app = create_app(path)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        base = "http://testserver/api/v1"
        async with ScreviClient(secret, base_url=base, transport=transport, rate_limit=None) as c:
            found = await c.search("tide")
        release.set()
    assert found.embedding_pending is not None
    assert found.embedding_pending >= SEARCH_NOTE_MIN_PENDING
