"""Hosted mode against a real API on 127.0.0.1 (the embedded library served by uvicorn):
what each kind of key lets an agent do, and how a refusal reads."""

from __future__ import annotations

from server_testkit import LocalApi, Seed, assert_tool_error, call_error, call_ok, mcp_client

from screvi_mcp.server.backend import BackendConfig

READ_TOOLS = {
    "search_highlights",
    "list_highlights",
    "get_highlight",
    "get_random_highlights",
    "list_sources",
    "get_source",
    "list_articles",
    "read_article",
    "search_articles",
    "list_tags",
}


def hosted(local_api: LocalApi, key: str) -> BackendConfig:
    return BackendConfig(api_key=key, base_url=local_api.base_url)


async def test_read_only_key_reads_but_cannot_write(local_api: LocalApi, seed: Seed) -> None:
    async with mcp_client(hosted(local_api, local_api.read_key)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        read = await call_ok(client, "get_highlight", {"highlight_id": seed.book_highlight_id})
        refused = await call_error(client, "create_tag", {"name": "never"})
    assert "create_tag" in names, "a scoped key's scopes are only known when a write is tried"
    assert "Nothing in life is as important" in read
    assert_tool_error(refused, "insufficient_scope", "write")


async def test_write_key_writes(local_api: LocalApi, seed: Seed) -> None:
    async with mcp_client(hosted(local_api, local_api.write_key)) as client:
        text = await call_ok(
            client,
            "add_highlight_tags",
            {"highlight_id": seed.note_highlight_id, "tags": ["hosted-write"]},
        )
    assert "hosted-write" in text


async def test_legacy_key_makes_the_server_read_only(local_api: LocalApi, seed: Seed) -> None:
    async with mcp_client(hosted(local_api, local_api.legacy_key)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        text = await call_ok(client, "get_source", {"source_id": seed.book_id})
    assert names == READ_TOOLS, "write tools are not even listed"
    assert text.startswith("Thinking, Fast and Slow")


async def test_invalid_key(local_api: LocalApi) -> None:
    async with mcp_client(hosted(local_api, "sk_live_not-a-real-key")) as client:
        text = await call_error(client, "list_tags")
    assert_tool_error(text, "invalid_api_key", "SCREVI_API_KEY")
    assert "sk_live_not-a-real-key" not in text, "the key is never echoed"
