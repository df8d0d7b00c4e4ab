"""Hostile arguments an agent may send, through the SDK's client: each gets a `[code] ...
Next: ...` answer about the argument it sent, never advice about something else."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from server_testkit import assert_tool_error, call_error, call_ok, mcp_client

from screvi_mcp.local.api.app import RATE_LIMIT_SETTING
from screvi_mcp.local.storage.library import Library

pytestmark = pytest.mark.asyncio(loop_scope="module")

# A per-minute limit small enough to reach in a test, large enough for phantom callers to
# split it.
RATE = 40


@pytest.fixture
def client(shared_client: Client) -> Client:
    return shared_client


@pytest.mark.parametrize("bad_id", ["../../etc/passwd", "file:///etc/passwd", "a/b", "..", "."])
@pytest.mark.parametrize(
    ("tool", "argument", "extra"),
    [
        ("get_highlight", "highlight_id", {}),
        ("delete_highlight", "highlight_id", {}),
        ("get_source", "source_id", {}),
        ("read_article", "article_id", {}),
        ("update_tag", "tag_id", {"name": "renamed"}),
        ("add_highlight_tags", "highlight_id", {"tags": ["x"]}),
    ],
)
async def test_an_id_with_a_path_in_it_is_not_found_not_a_wrong_base_url(
    client: Client, tool: str, argument: str, extra: dict[str, object], bad_id: str
) -> None:
    # Spec: 404 not_found "also for malformed ids". A slash in an id used to reach the API
    # as extra path segments, and the answer blamed SCREVI_BASE_URL.
    text = await call_error(client, tool, {argument: bad_id, **extra})
    assert_tool_error(text, "not_found", "was not found")
    assert "SCREVI_BASE_URL" not in text


@pytest.mark.parametrize(
    ("bad_id", "says"), [("a" * 65, "at most 64 characters"), ("  ", "at least 1 character")]
)
async def test_an_id_too_long_or_blank_is_named_in_characters(
    client: Client, bad_id: str, says: str
) -> None:
    # An id is a string: pydantic's "Value should have at most 64 items" read as a list.
    text = await call_error(client, "get_highlight", {"highlight_id": bad_id})
    assert_tool_error(text, "invalid_arguments", "highlight_id", says)
    assert "items" not in text


async def test_one_client_gets_the_whole_rate_limit_not_a_share_among_phantom_callers(
    library_path: Path,
) -> None:
    # SDK 2.x hands each request its own ServerSession over one connection: keyed by the
    # session object, one agent counted as dozens of callers and was refused with "3 of 3
    # requests a window while 29 callers share the key" after 44 calls of its 100.
    library = Library.open(library_path)
    try:
        library.set_setting(RATE_LIMIT_SETTING, str(RATE))
    finally:
        library.close()
    async with mcp_client(library_path) as client:
        for _ in range(RATE):
            await call_ok(client, "list_tags")
        text = await call_error(client, "list_tags")
    assert_tool_error(text, "rate_limited")
    assert "callers share" not in text
