"""A mirror searches inside its articles offline: sync brings each body in pages (only for
articles new or changed since the last run), and the mirror indexes its passages."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mirror_testkit import FAST, add_article, serve_stand_in, sync

from screvi_mcp.local.passages import attach
from screvi_mcp.local.storage.library import Library
from screvi_mcp.mirror.report import summary_text
from screvi_mcp.server.backend import BackendConfig
from server.server_testkit import call_ok, mcp_client

ESSAY = "\n\n".join(
    f"Section {n}. Tide tables were printed by harbour masters for every port; "
    + ("the spring tides follow the full and new moon. " * 8 if n == 9 else "")
    + "Sailors learned to read the water long before any almanac. " * 6
    for n in range(12)
)


def _passage_ids(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [int(r[0]) for r in conn.execute("SELECT id FROM article_passages ORDER BY id")]


async def test_synced_bodies_are_searchable_offline(stand_in_path: Path, mirror_path: Path) -> None:
    essay = add_article(stand_in_path, "http://127.0.0.1:9/tides", title="Tides", body=ESSAY)
    with serve_stand_in(stand_in_path) as stand_in:
        first = await sync(stand_in, mirror_path)
        assert first.finished and first.applied["details"].updated == 1
        # sync cuts the passages but leaves their vectors to the server: it says how many.
        assert first.passages_waiting == len(_passage_ids(mirror_path)), first
        assert f"{first.passages_waiting} not yet embedded" in summary_text(first)
        assert len(ESSAY) > 5 * FAST.body_chunk_chars  # read in pages of 1000 characters
        before = _passage_ids(mirror_path)
        assert len(before) > 5
        again = await sync(stand_in, mirror_path)
        assert again.applied["details"].updated == 0  # unchanged: its body is not read again
        assert _passage_ids(mirror_path) == before
        base_url = stand_in.base_url

    # The stand-in is gone: the mirror answers alone (no key, so it never tries to refresh).
    library = Library.open(mirror_path)
    try:
        if attach.attach(library) is not None:
            assert attach.wait_until_embedded(library, 60)
    finally:
        attach.detach(library)
        library.close()
    config = BackendConfig(mirror_path=mirror_path, base_url=base_url)
    async with mcp_client(config) as client:
        exact = await call_ok(client, "search_articles", {"query": "spring tides full moon"})
        meaning = await call_ok(
            client, "search_articles", {"query": "how the moon's phases change sea levels"}
        )
    for text in (exact, meaning):
        assert text.startswith("Tides") and essay in text, text
        assert f"offset={ESSAY.index('Section 9.')}" in text, text
    assert "hosted Screvi cannot search" not in exact
