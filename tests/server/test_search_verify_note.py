"""search_highlights with verify=true says how many checked matches scored under 0.5
(issue 25): the concise format shows no scores, and the embedded library drops none, so
without the note an agent cannot tell a page of doubtful matches from a page of answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from server_testkit import call_ok, mcp_client

from testsupport.embeddings import async_wait_until_embedded

pytest.importorskip("onnxruntime", reason="verify needs the `local` extra")

NOTE = re.compile(r"Relevance check: (\d+) of the (\d+) checked matches on this page scored")


async def test_verify_says_how_many_matches_it_doubts(library_path: Path) -> None:
    query = {"query": "why people come to believe false claims", "min_relevance": 0.0}
    async with mcp_client(library_path) as client:
        # The background worker embeds the seeded highlights after start-up.
        await async_wait_until_embedded(library_path, timeout=120)
        verified = await call_ok(client, "search_highlights", {**query, "verify": True})
        plain = await call_ok(client, "search_highlights", query)
    found = NOTE.search(verified)
    assert found is not None, verified
    doubted, judged = int(found[1]), int(found[2])
    # With no cut every seeded highlight is a match; only the one about repetition and
    # falsehoods answers, so the judge doubts all but (at most) that one.
    assert judged >= 3 and judged - 1 <= doubted < judged, verified
    assert "Relevance check" not in plain
