"""Fetching from the loopback site with private networks allowed: redirects, limits, errors."""

from __future__ import annotations

import pytest
from fetching_site import ARTICLE_HTML, LocalSite

from screvi_mcp.local.fetching.fetcher import (
    BadRedirectError,
    BodyTooLargeError,
    Fetcher,
    FetchSettings,
    FetchTimeoutError,
    HTTPStatusError,
    TooManyRedirectsError,
)
from screvi_mcp.local.fetching.netguard import AddressPolicy

ALLOW = AddressPolicy(allow_private=True)


def fetcher(**settings: object) -> Fetcher:
    return Fetcher(ALLOW, FetchSettings(**settings))  # type: ignore[arg-type]


async def test_a_page_is_fetched_whole(site: LocalSite) -> None:
    async with fetcher() as f:
        result = await f.fetch(site.url("/article"))
    assert result.status == 200
    assert result.body == ARTICLE_HTML
    assert result.content_type == "text/html"
    assert result.charset == "utf-8"
    assert result.url == site.url("/article")
    assert result.redirects == []


async def test_a_redirect_chain_is_followed_to_its_end(site: LocalSite) -> None:
    async with fetcher(max_redirects=5) as f:
        result = await f.fetch(site.url("/redirect/3"))
        resolved = await f.resolve_redirects(site.url("/redirect/3"))
    assert result.url == site.url("/article")
    assert result.redirects == [site.url(f"/redirect/{n}") for n in (3, 2, 1, 0)]
    assert result.body == ARTICLE_HTML
    assert resolved == site.url("/article")


async def test_redirects_are_bounded(site: LocalSite) -> None:
    async with fetcher(max_redirects=3) as f:
        with pytest.raises(TooManyRedirectsError):
            await f.fetch(site.url("/redirect/5"))
        with pytest.raises(TooManyRedirectsError):
            await f.fetch(site.url("/loop"))
        with pytest.raises(TooManyRedirectsError):
            await f.resolve_redirects(site.url("/loop"))
    assert site.hits("/loop") == 8  # 4 per fetch: the first request and 3 redirects


async def test_a_redirect_to_another_scheme_is_refused(site: LocalSite) -> None:
    async with fetcher() as f:
        with pytest.raises(BadRedirectError):
            await f.fetch(site.url("/to-file"))


async def test_http_errors_keep_their_status(site: LocalSite) -> None:
    async with fetcher() as f:
        with pytest.raises(HTTPStatusError) as missing:
            await f.fetch(site.url("/missing"))
        with pytest.raises(HTTPStatusError) as busy:
            await f.fetch(site.url("/broken"))
    assert missing.value.http_status == 404
    assert not missing.value.transient
    assert missing.value.content_type == "text/html"
    assert "404" in missing.value.message
    assert busy.value.http_status == 503
    assert busy.value.transient


async def test_a_declared_oversize_body_is_refused(site: LocalSite) -> None:
    async with fetcher(max_bytes=100_000) as f:
        with pytest.raises(BodyTooLargeError) as caught:
            await f.fetch(site.url("/big"))
    assert caught.value.reason == "too_large"
    assert not caught.value.transient


async def test_an_undeclared_oversize_body_is_cut_off_while_reading(site: LocalSite) -> None:
    async with fetcher(max_bytes=50_000) as f:
        with pytest.raises(BodyTooLargeError):
            await f.fetch(site.url("/big-chunked"))


async def test_a_slow_page_times_out(site: LocalSite) -> None:
    async with fetcher(read_timeout=0.2, total_timeout=5) as f:
        with pytest.raises(FetchTimeoutError) as caught:
            await f.fetch(site.url("/slow"))
    assert caught.value.transient
    assert caught.value.reason == "timeout"


async def test_the_total_time_of_a_fetch_is_bounded(site: LocalSite) -> None:
    async with fetcher(read_timeout=5, total_timeout=0.2) as f:
        with pytest.raises(FetchTimeoutError):
            await f.fetch(site.url("/slow"))


async def test_nothing_listening_is_a_transient_connection_error(site: LocalSite) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port that is free right now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with fetcher() as f:
        with pytest.raises(Exception) as caught:
            await f.fetch(f"http://127.0.0.1:{port}/")
    assert getattr(caught.value, "reason", None) == "connection_error"
    assert getattr(caught.value, "transient", False)
