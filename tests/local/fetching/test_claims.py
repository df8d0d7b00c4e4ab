"""One claim per article across processes: no page is fetched twice.

Two `Library` objects on one file have their own SQLite connections, so to the database they
are two processes; each runs its own worker, as two MCP hosts sharing a library would.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from fetching_site import LocalSite
from test_pipeline import ALLOW, FAST_RETRIES, GatedFetcher, article, running, settle

from screvi_mcp.local.fetching.fetcher import Fetcher
from screvi_mcp.local.fetching.save import save_article
from screvi_mcp.local.library import Library


async def test_a_second_worker_starting_does_not_steal_a_live_claim(
    tmp_path: Path, site: LocalSite
) -> None:
    path = tmp_path / "shared.sqlite3"
    first, second = Library.open(path), Library.open(path)
    try:
        held = GatedFetcher()
        async with held, Fetcher(ALLOW) as free:
            saved = await save_article(first, site.url("/article"), None, fetcher=held)
            async with running(first, held):
                async with held.entered:
                    await asyncio.wait_for(held.entered.wait_for(lambda: held.in_flight == 1), 30)
                # Another process starts while the first is fetching: its start-up re-queue
                # must leave the live claim alone, and it must not fetch the page itself.
                async with running(second, free) as other:
                    await settle(other)
                    assert site.hits("/article") == 0
                    assert article(second, saved.id)["parse_state"] == "fetching"
                held.gate.set()
                async with running(first, free) as again:
                    await settle(again)
                for _ in range(300):
                    if article(first, saved.id)["parse_state"] == "parsed":
                        break
                    await asyncio.sleep(0.1)
        row = article(first, saved.id)
        assert row["parse_state"] == "parsed"
        assert site.hits("/article") == 1
        assert row["fetch_attempts"] == 1
    finally:
        first.close()
        second.close()


async def test_an_abandoned_claim_is_taken_over(library: Library, site: LocalSite) -> None:
    """A claim whose lease ran out (its process died) is fetched by the next worker."""
    async with Fetcher(ALLOW) as fetcher:
        saved = await save_article(library, site.url("/article"), None, fetcher=fetcher)
        with library.write() as conn:
            conn.execute(
                "UPDATE articles SET parse_state = 'fetching', fetch_attempts = 1, "
                "claim_owner = 'a process that died', "
                "claim_expires_at = '2000-01-01T00:00:00.000000Z' WHERE source_id = ?",
                (saved.id,),
            )
        async with running(library, fetcher, FAST_RETRIES) as worker:
            await settle(worker)
    row = article(library, saved.id)
    assert (row["parse_state"], row["fetch_attempts"]) == ("parsed", 2)
    assert row["claim_owner"] is None


async def test_a_long_fetch_keeps_its_claim_by_renewing_the_lease(
    tmp_path: Path, site: LocalSite
) -> None:
    """A fetch lasting several leases is still not taken over: its worker renews the lease."""
    short = dataclasses.replace(FAST_RETRIES, claim_lease=0.6)
    path = tmp_path / "shared.sqlite3"
    first, second = Library.open(path), Library.open(path)
    try:
        held = GatedFetcher()
        async with held, Fetcher(ALLOW) as free:
            saved = await save_article(first, site.url("/article"), None, fetcher=held)
            async with running(first, held, short):
                async with held.entered:
                    await asyncio.wait_for(held.entered.wait_for(lambda: held.in_flight == 1), 30)
                async with running(second, free, short) as other:
                    for _ in range(4):  # well past the lease, looking for work each time
                        await asyncio.sleep(0.5)
                        await settle(other)
                    assert site.hits("/article") == 0
                held.gate.set()
                for _ in range(300):
                    if article(first, saved.id)["parse_state"] == "parsed":
                        break
                    await asyncio.sleep(0.1)
        assert article(first, saved.id)["parse_state"] == "parsed"
        assert site.hits("/article") == 1
    finally:
        first.close()
        second.close()
