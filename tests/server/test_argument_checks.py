"""Unknown tool arguments and bad prompt arguments get an error that says what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from server_testkit import LocalApi, Seed, call_error, call_ok, mcp_client

from screvi_mcp.server.backend import BackendConfig

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def client(shared_client: Client) -> Client:
    return shared_client


async def test_an_unknown_argument_is_named_with_the_accepted_ones(client: Client) -> None:
    text = await call_error(client, "search_highlights", {"query": "attention", "limit": 3})
    assert text.startswith("[invalid_arguments] search_highlights has no argument limit")
    assert "per_page" in text and "Next:" in text
    for accepted in ("query", "min_relevance", "response_format"):
        assert accepted in text
    # Several at once are all named.
    text = await call_error(client, "list_tags", {"page": 2, "sort": "name"})
    assert "has no arguments page, sort" in text and "accepts: no arguments" in text


async def test_update_source_with_type_is_refused_not_a_silent_success(
    library_path: Path, seed: Seed
) -> None:
    async with mcp_client(library_path) as client:
        text = await call_error(
            client, "update_source", {"source_id": seed.book_id, "type": "podcast"}
        )
        assert "has no argument type" in text and "fixed when it is created" in text
        assert "Nothing to change" not in text
        detail = await call_ok(client, "get_source", {"source_id": seed.book_id})
        assert "podcast" not in detail.splitlines()[0]


async def test_known_arguments_still_work(client: Client) -> None:
    await call_ok(client, "search_highlights", {"query": "attention", "per_page": 3})


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("triage_reading_list", {"limit": "lots"}, "limit: Input should be a valid integer"),
        ("triage_reading_list", {"limit": "500"}, "limit: Input should be less than"),
        ("answer_from_library", {}, "missing required argument(s) question"),
        ("review_topic", {"topic": "focus", "mood": "calm"}, "unknown argument(s) mood"),
        ("summarise_everything", {}, "no prompt named 'summarise_everything'"),
    ],
)
async def test_a_bad_prompt_argument_is_invalid_params_with_a_next_step(
    client: Client, name: str, arguments: dict[str, str], says: str
) -> None:
    with pytest.raises(MCPError) as caught:
        await client.get_prompt(name, arguments)
    assert caught.value.code == -32602  # invalid params, not an internal error
    assert says in caught.value.message
    assert "Next:" in caught.value.message


async def test_good_prompt_arguments_still_render(client: Client) -> None:
    result = await client.get_prompt("triage_reading_list", {"limit": "5"})
    assert "per_page=5" in str(result.messages[0].content)


async def test_a_base_url_without_the_api_root_is_blamed_not_the_id(local_api: LocalApi) -> None:
    # The CLI refuses such a URL at start-up; a server built in code (or an API moved
    # behind a proxy) still must not send the agent hunting for ids.
    root = local_api.base_url.removesuffix("/api/v1")
    config = BackendConfig(api_key=local_api.write_key, base_url=root)
    async with mcp_client(config) as client:
        text = await call_error(client, "list_tags")
        missing = await call_error(client, "get_highlight", {"highlight_id": "0" * 8})
    for answer in (text, missing):
        assert "SCREVI_BASE_URL" in answer and "/api/v1" in answer
        assert "find the right id" not in answer
