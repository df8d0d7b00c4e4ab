"""Syncing from an upstream that misbehaves (issue 31, items 2, 10, 11): a real HTTP server
on 127.0.0.1 serves crafted pages; the sync must end, bounded, keeping nothing the upstream
did not really list, and say truthfully what happened."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from mirror_testkit import FAST
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from screvi_mcp.local.storage.library import Library
from screvi_mcp.mirror.sync import SyncSummary, build_client, run_sync
from screvi_mcp.mirror.walk_guard import UpstreamMisbehaves
from testsupport.servers import asgi_server

BOUND_SECONDS = 30.0
KEY = "sk_live_" + "k" * 40
Pager = Callable[[Request, int], dict[str, Any] | Response]


def page(items: list[Any], number: int, *, total: int, has_more: bool, per_page: int = 4) -> Any:
    pages = max(1, -(-total // per_page))
    return {
        "data": items,
        "pagination": {
            "page": number,
            "per_page": per_page,
            "total": total,
            "total_pages": pages,
            "has_more": has_more,
        },
    }


def highlight(item_id: Any, text: str = "A passage.", **extra: Any) -> dict[str, Any]:
    return {
        "id": item_id,
        "content": text,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "tags": [],
        **extra,
    }


def empty(request: Request, number: int) -> dict[str, Any]:
    return page([], number, total=0, has_more=False)


class Upstream:
    """A Screvi stand-in whose list answers the test scripts; counts what was asked."""

    def __init__(self) -> None:
        self.lists: dict[str, Pager] = {
            name: empty for name in ("sources", "highlights", "articles")
        }
        self.tags: list[dict[str, Any]] = []
        self.requests: dict[str, int] = {}

    def app(self) -> Starlette:
        async def listing(request: Request) -> Response:
            name = request.path_params["name"]
            self.requests[name] = self.requests.get(name, 0) + 1
            if name == "tags":
                return JSONResponse({"data": self.tags})
            if name not in self.lists:
                return JSONResponse({"error": {"code": "not_found"}}, status_code=404)
            number = int(request.query_params.get("page", "1"))
            answer = self.lists[name](request, number)
            return answer if isinstance(answer, Response) else JSONResponse(answer)

        return Starlette(routes=[Route("/api/v1/{name}", listing)])


@contextmanager
def serving(upstream: Upstream) -> Iterator[str]:
    with asgi_server(upstream.app()) as url:
        yield url + "/api/v1"


async def run(base_url: str, mirror: Path, **settings: Any) -> SyncSummary:
    chosen = replace(FAST, wait_for_vectors=False, **settings)
    client, clock = build_client(KEY, base_url, chosen)
    library = Library.open(mirror)
    try:
        # A bound on the test, not the behaviour under test: without the guard these runs
        # never end.
        with anyio.fail_after(BOUND_SECONDS):
            async with client:
                return await run_sync(library, client, clock, api_key=KEY, settings=chosen)
    finally:
        library.close()


def live_highlights(mirror: Path) -> set[str]:
    conn = sqlite3.connect(mirror)
    try:
        rows = conn.execute("SELECT id FROM highlights WHERE deleted_at IS NULL").fetchall()
        return {row[0] for row in rows}
    finally:
        conn.close()


async def test_an_upstream_that_never_stops_saying_has_more_is_stopped(
    mirror_path: Path,
) -> None:
    """Always `has_more: true` with fresh ids, and a total that grows with each page: 1,065
    pages and 106,100 phantom rows in 120 s, kept in the mirror. The walk believes the first
    page's size (plus slack) and stores no page past it."""
    upstream = Upstream()
    real = [str(uuid.uuid4()) for _ in range(6)]

    def endless(request: Request, number: int) -> dict[str, Any]:
        ids = real[(number - 1) * 4 : number * 4] or [str(uuid.uuid4()) for _ in range(4)]
        return page([highlight(i) for i in ids], number, total=6 + number * 4, has_more=True)

    upstream.lists["highlights"] = endless
    began = time.monotonic()
    with serving(upstream) as url, pytest.raises(UpstreamMisbehaves) as stopped:
        await run(url, mirror_path)
    assert time.monotonic() - began < 60
    assert "has_more" in str(stopped.value)
    # The first page says 10 items in 3 pages; 3 pages of slack; the refused 7th.
    assert upstream.requests["highlights"] <= 7
    kept = live_highlights(mirror_path)
    assert set(real) <= kept and len(kept) <= 10 + 3 * 4


async def test_an_upstream_that_repeats_one_page_is_stopped(mirror_path: Path) -> None:
    upstream = Upstream()
    same = [str(uuid.uuid4()) for _ in range(4)]
    upstream.lists["highlights"] = lambda request, number: page(
        [highlight(i) for i in same], number, total=100_000, has_more=True
    )
    with serving(upstream) as url, pytest.raises(UpstreamMisbehaves) as stopped:
        await run(url, mirror_path)
    assert "again" in str(stopped.value)
    assert upstream.requests["highlights"] <= 1 + 3
    assert live_highlights(mirror_path) == set(same)


async def test_a_run_has_its_own_caps_on_pages_and_rows(mirror_path: Path) -> None:
    """An upstream that says it is huge and keeps serving new ids: the run's own caps end
    it (stated in the settings), not the upstream."""
    upstream = Upstream()
    upstream.lists["highlights"] = lambda request, number: page(
        [highlight(str(uuid.uuid4())) for _ in range(4)], number, total=10**9, has_more=True
    )
    with serving(upstream) as url, pytest.raises(UpstreamMisbehaves) as stopped:
        await run(url, mirror_path, max_pages=5)
    assert "more than 5 pages" in str(stopped.value)
    assert len(live_highlights(mirror_path)) == 5 * 4
    with serving(upstream) as url, pytest.raises(UpstreamMisbehaves) as stopped:
        await run(url, mirror_path.with_name("other.sqlite3"), max_rows=10)
    assert "more than 10 items" in str(stopped.value)


async def test_the_tag_member_walk_is_bounded_too(mirror_path: Path) -> None:
    upstream = Upstream()
    tag_id = str(uuid.uuid4())
    upstream.tags = [{"id": tag_id, "name": "loop", "highlight_count": 3, "article_count": 0}]

    def highlights(request: Request, number: int) -> dict[str, Any]:
        if request.query_params.get("tag_id"):  # the member walk: never ends
            return page([highlight(str(uuid.uuid4()))], number, total=3, has_more=True)
        return page([], number, total=0, has_more=False)

    upstream.lists["highlights"] = highlights
    with serving(upstream) as url, pytest.raises(UpstreamMisbehaves):
        await run(url, mirror_path)
    assert upstream.requests["highlights"] < 20


async def test_ids_and_shapes_are_checked_at_the_boundary(mirror_path: Path) -> None:
    """A non-UUID id was stored (a phantom, and a missing highlight later); an integer id
    made every sync stop at that page. Items of the wrong shape are skipped and reported;
    the rest of the page is stored."""
    upstream = Upstream()
    good = [str(uuid.uuid4()) for _ in range(2)]
    items = [
        highlight(good[0]),
        highlight("not-a-uuid"),
        highlight(12345),
        {"content": "no id at all"},
        "a bare string",
        highlight(str(uuid.uuid4()), source={"id": "../../etc", "name": "x"}),
        highlight(good[1], tags=[{"id": str(uuid.uuid4()), "name": "fine"}]),
    ]
    upstream.lists["highlights"] = lambda request, number: page(
        items, number, total=len(items), has_more=False, per_page=100
    )
    with serving(upstream) as url:
        summary = await run(url, mirror_path)
    assert summary.finished
    assert live_highlights(mirror_path) == set(good)
    assert summary.skipped == {"highlights": 5}
    from screvi_mcp.mirror.report import summary_text

    assert "skipped" in summary_text(summary) and "5 highlights" in summary_text(summary)


def test_a_key_refused_mid_sync_does_not_claim_nothing_changed(mirror_path: Path) -> None:
    """After a 401 at page 2 the command said "nothing was changed by this run" though the
    first page was stored."""
    import os
    import subprocess
    import sys

    upstream = Upstream()
    first = [str(uuid.uuid4()) for _ in range(4)]

    def revoked_after_one_page(request: Request, number: int) -> Any:
        if number == 1:
            return page([highlight(i) for i in first], number, total=8, has_more=True)
        body = {"error": "Invalid API key", "code": "invalid_api_key"}
        return JSONResponse(body, status_code=401)

    upstream.lists["highlights"] = revoked_after_one_page
    mirror_path.parent.mkdir(parents=True, exist_ok=True)
    with serving(upstream) as url:
        env = {**os.environ, "SCREVI_API_KEY": KEY, "SCREVI_BASE_URL": url}
        done = subprocess.run(
            [sys.executable, "-m", "screvi_mcp", "sync", "--library", str(mirror_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert "nothing was changed" not in done.stderr
    assert "4 items stored by this run before it stopped are kept" in done.stderr
    assert KEY not in done.stderr
    assert live_highlights(mirror_path) == set(first)
