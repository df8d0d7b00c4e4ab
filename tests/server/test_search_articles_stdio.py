"""End to end over stdio: `screvi-mcp --library` as a subprocess saves a page from a local
site, finds a passage of it by meaning with search_articles, and reads it from the match."""

from __future__ import annotations

import re
from pathlib import Path

from article_texts import ARTICLES
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent
from server_testkit import SCREVI_MCP, server_env

from testsupport.pages_site import article_html, serve_pages
from testsupport.polling import async_wait_until

_READ = re.compile(r'read_article\(article_id="([^"]+)", offset=(\d+), max_chars=(\d+)\)')


def _text(result: CallToolResult) -> str:
    assert not result.is_error, result
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


async def test_save_search_read_over_stdio(tmp_path: Path) -> None:
    pages = {path: article_html(*parts) for path, parts in ARTICLES.items()}
    params = StdioServerParameters(
        command=SCREVI_MCP,
        args=["--library", str(tmp_path / "lib.sqlite3")],
        env=server_env(SCREVI_ALLOW_PRIVATE_NETWORKS="1"),
    )
    with serve_pages(pages) as site, (tmp_path / "stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for path in ARTICLES:
                saved = await session.call_tool(
                    "save_article", {"url": site + path, "wait": True, "wait_seconds": 60}
                )
                assert "parse_state parsed" in _text(saved)
            query = {"query": "replicas that converge without a central server"}

            async def found_by_meaning() -> str:  # once the passages are embedded
                found = _text(await session.call_tool("search_articles", query))
                return found if found.startswith("How collaborative editors") else ""

            found = await async_wait_until(
                found_by_meaning, timeout=60, what="the passage was not found", every=0.2
            )
            assert found.startswith("How collaborative editors merge edits"), found
            article_id, offset, max_chars = _READ.search(found).groups()  # type: ignore[union-attr]
            chunk = _text(
                await session.call_tool(
                    "read_article",
                    {"article_id": article_id, "offset": int(offset), "max_chars": int(max_chars)},
                )
            )
    assert "concurrent operations commute" in chunk
    assert f"[Characters {offset}–" in chunk
