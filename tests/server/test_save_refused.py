"""save_article of a page the fetch policy refuses is refused in the answer to the save,
with the spec's error shape, and nothing is queued: the agent learns it at once instead of
from an article that fails later."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from server_testkit import assert_tool_error, call_error, mcp_client

from screvi_mcp.local.fetching.netguard import ALLOW_PRIVATE_ENV


def article_urls(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {row[0] for row in conn.execute("SELECT url FROM articles")}
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:8080/notes", "loopback"),
        ("http://127.1/notes", "loopback"),  # a legacy numeric form sockets accept
        ("http://[::1]/notes", "loopback"),
        ("http://localhost:3000/", "local host name"),
        ("http://10.1.2.3/intranet", "private-network"),
    ],
)
async def test_a_page_on_a_refused_address_is_refused_when_saved(
    library_path: Path, url: str, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_PRIVATE_ENV, raising=False)
    before = article_urls(library_path)
    async with mcp_client(library_path) as client:
        text = await call_error(client, "save_article", {"url": url})
    assert_tool_error(text, "validation_failed", "url", reason, ALLOW_PRIVATE_ENV)
    assert "queued" not in text
    assert article_urls(library_path) == before  # nothing saved to fail later


async def test_cloud_metadata_is_refused_even_when_private_networks_are_allowed(
    library_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_PRIVATE_ENV, "1")
    async with mcp_client(library_path) as client:
        text = await call_error(client, "save_article", {"url": "http://169.254.169.254/x"})
    assert_tool_error(text, "validation_failed", "metadata")
