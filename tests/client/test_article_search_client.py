"""ScreviClient.search_articles is an extension: refused before any request on hosted Screvi."""

from __future__ import annotations

import httpx
import pytest

from screvi_mcp.client import InvalidParameterError, ScreviClient


async def test_refused_against_the_hosted_api_without_a_request() -> None:
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    client = ScreviClient("sk_live_test", transport=httpx.MockTransport(record))
    async with client:
        with pytest.raises(InvalidParameterError, match="extension of the embedded library"):
            await client.search_articles("anything")
    assert sent == []
