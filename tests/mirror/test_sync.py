"""`run_sync` against a stand-in Screvi on 127.0.0.1: full copy, incremental, deletions."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from mirror_testkit import (
    FAST,
    LONG_BODY,
    StandIn,
    add_article,
    embedded_client,
    mirror_client,
    search_ids,
    seed,
    serve_stand_in,
    snapshot,
    sync,
)

from screvi_mcp.client.errors import NotFoundError
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import mirror_rows as mirror_store
from screvi_mcp.mirror.identity import MirrorMismatch
from screvi_mcp.mirror.sync import SyncSettings, build_client, run_sync
from testsupport.embeddings import async_wait_until_embedded

QUERIES = ["moon and tides", "patience with money", "gardens", "green sea"]


async def assert_same(stand_in: StandIn, mirror: Path) -> None:
    """Every list, body and search answer of the mirror equals the stand-in's."""
    async with stand_in.client() as source, mirror_client(mirror) as copy:
        expected = await snapshot(source)
        actual = await snapshot(copy)
        for part in expected:
            if part in ("highlights", "sources", "articles"):
                mine = {item["id"] for item in actual[part]}
                theirs = {item["id"] for item in expected[part]}
                assert mine == theirs, (part, mine - theirs, theirs - mine)
            assert actual[part] == expected[part], part
        # Screvi's own library embeds its writes in the background: compare searches by
        # meaning once it has caught up, or a busy machine compares half an index.
        await async_wait_until_embedded(stand_in.path)
        for query in QUERIES:
            assert await search_ids(copy, query) == await search_ids(source, query), query


@pytest.fixture
def with_articles(stand_in_path: Path) -> dict[str, str]:
    """Two saved articles (one long, tagged; one without highlights), before serving."""
    return {
        "long": add_article(
            stand_in_path,
            "http://127.0.0.1:9/essay",
            title="Tide pools",
            body=LONG_BODY,
            tags=["reading"],
        ),
        "short": add_article(
            stand_in_path, "http://127.0.0.1:9/short", title="Short note", body="Brief body."
        ),
    }


async def test_full_copy_equals_the_source(
    with_articles: dict[str, str], stand_in_path: Path, mirror_path: Path
) -> None:
    with serve_stand_in(stand_in_path) as stand_in:
        async with stand_in.client() as client:
            await seed(client)
            await client.create_highlight(
                "Tide pools hold whole worlds.", article_id=with_articles["long"], tags=["ocean"]
            )
        summary = await sync(stand_in, mirror_path)
        assert summary.full and summary.finished
        assert summary.applied["highlights"].created == 10
        assert summary.applied["details"].updated == 2
        await assert_same(stand_in, mirror_path)
        # The long body came in several chunks and is whole.
        async with mirror_client(mirror_path) as copy:
            article = await copy.get_article(with_articles["long"], format="text")
            assert article.content == LONG_BODY and len(LONG_BODY) > 3 * FAST.body_chunk_chars

    library = Library.open(mirror_path)
    try:
        state = mirror_store.read_state(library.connection())
        assert state["base_url"] == stand_in.base_url
        assert stand_in.key not in str(state) and "cursor" in state and "last_sync_at" in state
        assert not any(key.startswith("run_") for key in state)
    finally:
        library.close()


async def test_incremental_sync_applies_creates_edits_tags_and_deletions(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        ids = await seed(client)
        doomed = await client.create_source("To be removed", "custom")
        await client.create_highlight("Soon gone with its source.", source_id=doomed.id)
        await sync(stand_in, mirror_path)

        new = await client.create_highlight("Fresh words on lunar cycles.", tags=["moon"])
        await client.update_highlight(ids["lone"], content="A standalone thought about roses.")
        await client.add_highlight_tags(ids["tide"], ["physics"])
        await client.remove_highlight_tags(ids["tide"], ["Moon"])
        tags = {tag.name: tag.id for tag in await client.list_tags()}
        await client.update_tag(tags["ocean"], name="Sea")
        await client.delete_tag(tags["Moon"])
        page = await client.list_highlights(source_id=ids["notes"], per_page=2)
        await client.delete_highlight(page.data[0].id)
        await client.delete_source(doomed.id, cascade=True)
        await client.delete_source(ids["empty"])
        await client.update_source(ids["book"], name="The Sea Around Us (1951)")

    summary = await sync(stand_in, mirror_path)
    assert summary.finished and not summary.full
    assert summary.applied["highlights"].created == 1
    assert summary.applied["sources"].deleted == 2
    # Only what changed was listed again (plus an overlap), not the whole library.
    assert summary.applied["highlights"].unchanged < 10

    await assert_same(stand_in, mirror_path)
    async with mirror_client(mirror_path) as copy:
        assert (await copy.get_highlight(new.id)).content == "Fresh words on lunar cycles."
        with pytest.raises(NotFoundError):
            await copy.get_source(doomed.id)
        # The edit reached the copy's search: the edited highlight leads (weaker semantic
        # matches may follow it, down to the per-hit floor).
        assert (await search_ids(copy, "roses"))[:1] == [ids["lone"]]


async def test_a_second_sync_with_no_changes_changes_nothing(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        await seed(client)
    await sync(stand_in, mirror_path)
    again = await sync(stand_in, mirror_path)
    assert again.finished
    for name in ("sources", "highlights", "articles"):
        assert again.applied[name].created == again.applied[name].updated == 0, name
    await assert_same(stand_in, mirror_path)


async def test_a_library_that_is_not_a_mirror_is_refused(stand_in: StandIn, tmp_path: Path) -> None:
    async with stand_in.client() as client:
        await seed(client)
    own = tmp_path / "own.sqlite3"
    async with embedded_client(own) as embedded:
        await embedded.create_highlight("My own note.")
    with pytest.raises(MirrorMismatch, match="not a mirror"):
        await sync(stand_in, own)


async def test_another_address_or_key_is_refused(stand_in: StandIn, mirror_path: Path) -> None:
    await sync(stand_in, mirror_path)
    library = Library.open(mirror_path)
    try:
        settings = SyncSettings(requests_per_minute=100_000)
        client, clock = build_client("sk_live_other", stand_in.base_url, settings)
        async with client:
            with pytest.raises(MirrorMismatch, match="another API key") as refused:
                await run_sync(library, client, clock, api_key="sk_live_other", settings=settings)
        assert "sk_live_other" not in str(refused.value)
        assert stand_in.key not in str(refused.value)
        other, clock = build_client(stand_in.key, stand_in.base_url + "/", settings)
        mirror_store.write_state(library, {"base_url": "http://127.0.0.1:1/api/v1"})
        async with other:
            with pytest.raises(MirrorMismatch, match=r"mirrors http://127\.0\.0\.1:1"):
                await run_sync(library, other, clock, api_key=stand_in.key, settings=settings)
    finally:
        library.close()


async def test_tag_changes_that_leave_updated_at_alone_are_found_by_their_counts(
    stand_in: StandIn, mirror_path: Path
) -> None:
    """A server that does not bump an item's updated_at on a tag change (the spec does not
    say it does): the stand-in's own file is changed behind its API, as such a server would."""
    import sqlite3

    async with stand_in.client() as client:
        ids = await seed(client)
        tags = {tag.name: tag.id for tag in await client.list_tags()}
    # No overlap, and the seed older than the first run: the second run lists nothing
    # again, so only the tag counts can reveal the change. The seed is dated an hour back
    # rather than waited out: the server's `Date` (the cursor) has whole seconds and uvicorn
    # refreshes it about once a second, so a seed of this second could be listed again.
    exact = replace(FAST, overlap=timedelta(0))
    conn = sqlite3.connect(stand_in.path)
    with conn:
        for table in ("sources", "highlights", "tags"):
            conn.execute(
                f"UPDATE {table} SET created_at = strftime('%Y-%m-%dT%H:%M:%f000Z', created_at, "
                "'-1 hour'), updated_at = strftime('%Y-%m-%dT%H:%M:%f000Z', updated_at, '-1 hour')"
            )
    conn.close()
    await sync(stand_in, mirror_path, exact)
    conn = sqlite3.connect(stand_in.path)
    with conn:
        conn.execute(
            "INSERT INTO highlight_tags(highlight_id, tag_id) VALUES (?, ?)",
            (ids["lone"], tags["ocean"]),
        )
        conn.execute("DELETE FROM highlight_tags WHERE tag_id = ?", (tags["Moon"],))
    conn.close()
    summary = await sync(stand_in, mirror_path, exact)
    listed = summary.applied["highlights"]
    assert listed.created + listed.updated + listed.unchanged == 0  # nothing listed again
    await assert_same(stand_in, mirror_path)


def _waiting_for_a_vector(mirror: Path) -> int:
    """Live highlights of the mirror with no English (MiniLM) vector, read from the file."""
    conn = sqlite3.connect(f"file:{mirror}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT count(*) FROM highlights h WHERE h.deleted_at IS NULL AND NOT EXISTS "
            "(SELECT 1 FROM highlight_embeddings e WHERE e.seq = h.seq)"
        ).fetchone()
        return int(row[0])
    finally:
        conn.close()


async def test_a_finished_sync_leaves_every_highlight_searchable_by_meaning(
    stand_in: StandIn, mirror_path: Path
) -> None:
    # Pages of 100 arrive faster than the embedding worker keeps up with: without waiting
    # for it, the sync ended with highlights still queued, and a server started on the copy
    # at once missed them by meaning (the copy's search differed from Screvi's).
    async with stand_in.client() as client:
        await seed(client)
        await client.create_highlights_bulk(
            [
                {"content": f"Entry {n}: the harvest moon rose over the quiet fields."}
                for n in range(100)
            ]
        )
    summary = await sync(stand_in, mirror_path, replace(FAST, per_page=100))
    assert summary.finished and summary.waiting_for_vectors == 0
    assert _waiting_for_a_vector(mirror_path) == 0
    await assert_same(stand_in, mirror_path)


def test_the_summary_says_when_highlights_still_wait_for_their_vectors() -> None:
    from screvi_mcp.mirror.report import summary_text
    from screvi_mcp.mirror.sync import SyncSummary

    done = SyncSummary(full=True, finished=True)
    assert "not yet embedded" not in summary_text(done)
    late = replace(done, waiting_for_vectors=12)
    assert "not yet embedded" in summary_text(late) and "12 highlights" in summary_text(late)
