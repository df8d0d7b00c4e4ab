"""Fixtures of the client tests: clients over a scriptable transport, and the embedded
library's app in-process and over a real socket on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from client_testkit import BASE_URL, SCOPED_KEY, FaultServer, MockClientFactory, Sleeps

from screvi_mcp.client import RetryPolicy, ScreviClient


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def mock_client(sleeps: Sleeps) -> Iterator[MockClientFactory]:
    """Build clients over a FaultServer; no rate limiter unless asked, retry sleeps recorded."""

    def build(
        server: FaultServer, api_key: str | None = SCOPED_KEY, **options: Any
    ) -> ScreviClient:
        options.setdefault("rate_limit", None)
        options.setdefault("retry", RetryPolicy(max_retries=3, max_total_wait=30.0))
        options.setdefault("sleep", sleeps)
        return ScreviClient(api_key, base_url=BASE_URL, transport=server.transport, **options)

    yield build
