"""search_highlights tells the agent when recent highlights are not searchable by meaning
yet (issue 31, item 13), and says nothing when the queue is empty."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_testkit import call_ok, mcp_client

from testsupport.backlog import hold_backlog

pytest.importorskip("onnxruntime", reason="the worker needs the `local` extra")


async def test_the_search_tool_says_how_many_wait_for_a_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "library.sqlite3"
    release = hold_backlog(path, "Harbour", monkeypatch)
    async with mcp_client(path) as client:
        try:
            text = await call_ok(client, "search_highlights", {"query": "harbour"})
        finally:
            release.set()  # before closing, which waits for the worker's round
    assert "not searchable by meaning yet" in text
    assert "keyword matches include them" in text
