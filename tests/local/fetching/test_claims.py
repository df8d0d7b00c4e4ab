"""One claim per article across processes: no page is fetched twice.

Two `Library` objects on one file have their own SQLite connections, so to the database they
are two processes; each runs its own worker, as two MCP hosts sharing a library would.
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import urlsplit

from fetching_site import LocalSite
from test_pipeline import ALLOW, FAST_RETRIES, GatedFetcher, article, running, settle

from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.fetching.fetcher import Fetcher
from screvi_mcp.local.fetching.save import save_article
from screvi_mcp.local.fetching.urls import normalise_url
from screvi_mcp.local.storage.library import Library
from testsupport.clocks import ManualClock
from testsupport.polling import async_wait_until, wait_until


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
                await async_wait_until(
                    lambda: article(first, saved.id)["parse_state"] == "parsed",
                    timeout=30,
                    what="the article was not parsed",
                    every=0.1,
                )
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
    """A fetch lasting several leases is still not taken over: its worker renews the lease.

    The workers' clock moves only when the test moves it: half a lease at a time, two leases
    in all, each step waking the renewal and then letting the other worker look for work.
    """
    clock = ManualClock()
    timed = dataclasses.replace(FAST_RETRIES, clock=clock)
    path = tmp_path / "shared.sqlite3"
    first, second = Library.open(path), Library.open(path)
    try:
        held = GatedFetcher()
        async with held, Fetcher(ALLOW) as free:
            saved = await save_article(first, site.url("/article"), None, fetcher=held)
            async with running(first, held, timed):
                async with held.entered:
                    await asyncio.wait_for(held.entered.wait_for(lambda: held.in_flight == 1), 30)
                async with running(second, free, timed) as other:
                    for step in range(4):
                        expiry = article(first, saved.id)["claim_expires_at"]
                        await async_wait_until(
                            lambda: clock.sleeping, timeout=30, what="no lease renewal waits"
                        )
                        clock.advance(timed.claim_lease / 2)
                        await async_wait_until(
                            lambda was=expiry: article(first, saved.id)["claim_expires_at"] != was,
                            timeout=30,
                            what=f"the lease was not renewed (step {step})",
                        )
                        await settle(other)
                    assert site.hits("/article") == 0
                    assert article(second, saved.id)["claim_owner"] != other.owner
                held.gate.set()
                await async_wait_until(
                    lambda: article(first, saved.id)["parse_state"] == "parsed",
                    timeout=30,
                    what="the article was not parsed",
                    every=0.1,
                )
        assert article(first, saved.id)["parse_state"] == "parsed"
        assert site.hits("/article") == 1
    finally:
        first.close()
        second.close()


# Real processes: three workers over one library file, started one after another ---------------

_WORKER = textwrap.dedent(
    """
    import asyncio, sys, time
    from screvi_mcp.local.fetching.fetcher import Fetcher
    from screvi_mcp.local.fetching.netguard import AddressPolicy
    from screvi_mcp.local.fetching.pipeline import ArticleWorker, WorkerSettings
    from screvi_mcp.local.storage.library import Library

    async def main() -> None:
        library = Library.open(sys.argv[1])
        settings = WorkerSettings(concurrency=2, max_attempts=1, poll_interval=0.2)
        async with Fetcher(AddressPolicy(allow_private=True)) as fetcher:
            worker = ArticleWorker(library, fetcher, settings)
            await worker.start()
            # A bounded poll in the child, which cannot import the tests' polling helper.
            deadline = time.monotonic() + 90  # a bound against hanging, not a check
            while time.monotonic() < deadline:
                left = library.connection().execute(
                    "SELECT count(*) FROM articles WHERE parse_state IN ('queued', 'fetching')"
                ).fetchone()[0]
                if left == 0:
                    break
                await asyncio.sleep(0.1)
            await worker.stop()
        library.close()

    asyncio.run(main())
    """
)


def _wait_for_requests(site: LocalSite, count: int, children: list[subprocess.Popen[str]]) -> None:
    def asked() -> bool:
        for child in children:
            assert child.poll() is None, child.communicate()[1][-2000:]
        return site.hits("/pause") >= count

    wait_until(
        asked,
        timeout=120,  # a bound against hanging, not a timing check
        what=lambda: f"{site.hits('/pause')} of {count} pages asked for",
        every=0.02,
    )


def test_processes_sharing_a_library_fetch_each_page_once(tmp_path: Path, site: LocalSite) -> None:
    path = tmp_path / "shared.sqlite3"
    library = Library.open(path)
    try:
        ids = []
        for n in range(6):
            with library.write() as conn:
                url = site.url(f"/pause?n={n}")
                ids.append(article_rows.insert_article(conn, url, normalise_url(url)))
    finally:
        library.close()

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    # The site holds every page until released. The next processes start (and run their
    # start-up re-queue) while the first holds live claims; with two fetches a worker, all
    # six pages are asked for at once only if all three workers claim, none twice.
    children = [start()]
    _wait_for_requests(site, 1, children)
    children += [start(), start()]
    _wait_for_requests(site, 6, children)
    site.release.set()
    for child in children:
        _, err = child.communicate(timeout=150)
        assert child.returncode == 0, err[-2000:]
    seen = [urlsplit(r.path).query for r in site.requests if urlsplit(r.path).path == "/pause"]
    assert sorted(seen) == sorted(f"n={n}" for n in range(6)), seen
    library = Library.open(path)
    try:
        states = {article(library, i)["parse_state"] for i in ids}
    finally:
        library.close()
    assert states == {"parsed"}
