"""search_highlights with verify=true says how many checked matches scored under 0.5
(issue 25): the concise format shows no scores, and the embedded library drops none, so
without the note an agent cannot tell a page of doubtful matches from a page of answers."""

from __future__ import annotations

import re
import time
from pathlib import Path

import anyio
import pytest
from server_testkit import call_ok, mcp_client

pytest.importorskip("onnxruntime", reason="verify needs the `local` extra")

NOTE = re.compile(r"Relevance check: (\d+) of the (\d+) checked matches on this page scored")


async def _searched(client: object, arguments: dict[str, object]) -> str:
    """The tool's answer once the seeded highlights are searchable by meaning (the
    background worker embeds them after start-up), within a bounded wait."""
    deadline = time.monotonic() + 120
    while True:
        text = await call_ok(client, "search_highlights", arguments)  # type: ignore[arg-type]
        if "not searchable by meaning yet" not in text or time.monotonic() > deadline:
            return text
        await anyio.sleep(0.1)  # polling interval, not a synchronisation


async def test_verify_says_how_many_matches_it_doubts(library_path: Path) -> None:
    query = {"query": "why people come to believe false claims", "min_relevance": 0.0}
    async with mcp_client(library_path) as client:
        verified = await _searched(client, {**query, "verify": True})
        plain = await _searched(client, query)
    found = NOTE.search(verified)
    assert found is not None, verified
    doubted, judged = int(found[1]), int(found[2])
    # With no cut every seeded highlight is a match; only the one about repetition and
    # falsehoods answers, so the judge doubts all but (at most) that one.
    assert judged >= 3 and judged - 1 <= doubted < judged, verified
    assert "Relevance check" not in plain
