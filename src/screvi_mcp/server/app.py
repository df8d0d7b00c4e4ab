"""Assembling the MCP server: tools by toolset (write tools left out in read-only mode),
resources, prompts, and the error wording every failure shares."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from mcp.server import MCPServer

from screvi_mcp import __version__, contract
from screvi_mcp.server import prompts, resources
from screvi_mcp.server.argument_checks import argument_checks
from screvi_mcp.server.backend import Backend
from screvi_mcp.server.toolkit import TOOLSETS, Toolset, ToolSpec
from screvi_mcp.server.tools import (
    article_search,
    articles,
    highlights,
    review,
    search,
    sources,
    tags,
)
from screvi_mcp.server.transport import add_health_route

INSTRUCTIONS = f"""\
Tools for the user's Screvi library: highlights from books, articles, podcasts and more, \
their sources, a read-later list of saved articles, and tags.
- To answer from the library: search_highlights first, then get_source or read_article for \
context. Cite sources by name and author.
- Long articles: read_article returns one chunk and the offset to continue from.
- Ids returned by one tool are the arguments of the next. Lists are paged; each answer says \
how to get the next page.
- Errors start with a [code] and say what to do next. The API allows \
{contract.RATE_LIMIT_PER_MINUTE} requests per minute: prefer bulk and paged calls."""


MIRROR_INSTRUCTIONS = """
- Answers come from a local mirror of the library (fast, offline); when it may be out of \
date an answer ends with a note saying how old it is."""
MIRROR_READ_ONLY = """
- No write tools: this mirror is served without an API key, and writes go to Screvi first. \
To change the library, the user sets SCREVI_API_KEY (a key with write access)."""


def all_tool_specs() -> list[ToolSpec]:
    """Every tool, in the order agents see them; declaring needs no backend."""
    return [
        *search.TOOLS,
        *highlights.TOOLS,
        *sources.TOOLS,
        *articles.TOOLS,
        *article_search.TOOLS,
        *tags.TOOLS,
        *review.TOOLS,
    ]


def build_server(
    backend: Backend,
    *,
    read_only: bool = False,
    toolsets: Iterable[Toolset] = TOOLSETS,
) -> MCPServer:
    """The MCP server over `backend`. Read-only mode does not register write tools at all,
    so no agent can even try them; a legacy (read-only) key implies it."""
    read_only = read_only or backend.config.legacy_key or backend.config.mirror_read_only
    wanted = set(toolsets)
    instructions = INSTRUCTIONS
    if backend.config.mirror_path is not None:
        instructions += MIRROR_INSTRUCTIONS
        if backend.config.mirror_read_only:
            instructions += MIRROR_READ_ONLY
    mcp = MCPServer(
        "screvi",
        title="Screvi",
        instructions=instructions,
        version=__version__,
        website_url="https://screvi.com",
        # Only a mirror has freshness notes to add; elsewhere the middleware would cost
        # every call something for nothing.
        middleware=[tidy_tool_errors]
        + ([mirror_freshness_notes] if backend.config.mirror_path is not None else []),
    )
    hidden: dict[str, str] = {}
    for spec in all_tool_specs():
        if spec.toolset not in wanted:
            hidden[spec.name] = (
                f"its toolset, {spec.toolset}, is left out (--toolsets "
                f"{','.join(name for name in TOOLSETS if name in wanted)})"
            )
            continue
        if read_only and spec.write:
            hidden[spec.name] = "it writes, and this server is read-only"
            continue
        mcp.add_tool(
            spec.bind(backend),
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=spec.annotations,
            structured_output=False,
        )
    # The SDK has no public hook between building a tool's schema and serving it.
    for tool in mcp._tool_manager.list_tools():
        tool.parameters = compact_schema(tool.parameters)
    resources.register(mcp, backend)
    prompts.register(mcp)
    # Innermost, after the tools and prompts it checks exist.
    mcp.middleware.append(argument_checks(mcp, hidden))
    add_health_route(mcp)
    return mcp


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema with what costs tokens and tells an agent nothing taken out.

    Every tool list is paid for in every conversation. Pydantic's per-property `title`
    repeats the name, and an optional argument's `anyOf [X, null]` with `default: null` says
    no more than X alone in a property that is not required. Validation is untouched: it runs
    on the function's own signature.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs"):
                out[key] = {name: walk(sub) for name, sub in value.items()}
            else:
                out[key] = walk(value)
        options = out.get("anyOf")
        if isinstance(options, list) and out.get("default", ...) is None:
            rest = [option for option in options if option != {"type": "null"}]
            if len(rest) == 1:
                del out["anyOf"], out["default"]
                out = {**rest[0], **out}
        return out

    return dict(walk(schema))


_PREFIX = re.compile(r"^Error executing tool [\w.-]+(?:: )?")
_VALIDATION_HEAD = re.compile(r"^\d+ validation errors? for \w+\n")
_VALIDATION_ITEM = re.compile(r"^(?P<field>\S[^\n]*)\n\s+(?P<msg>[^\n]+?)\s*\[type=", re.M)
_UNKNOWN_TOOL = re.compile(r"^Unknown tool: (?P<name>\S+)$")
_LIST_INDEX = re.compile(r"\.(\d+)(?=\.|$)")


def _api_field_name(location: str) -> str:
    """`highlights.1.content` as the API names it: `highlights[1].content`."""
    return _LIST_INDEX.sub(r"[\1]", location)


def _tidy(text: str) -> str:
    """The SDK's wording of a failure, rewritten as `[code] what. Next: what to do.`"""
    unknown = _UNKNOWN_TOOL.match(text)
    if unknown:
        # Typically a write tool remembered from elsewhere, called on a read-only server.
        return (
            f"[unknown_tool] This server has no tool named {unknown.group('name')} (write "
            "tools are not offered in read-only mode). Next: use one of the tools it lists."
        )
    rest = _PREFIX.sub("", text, count=1)
    if rest == text:
        return text
    if not rest:
        # A crash: its details stay in the server log, never in the agent's context.
        return (
            "[internal_error] The tool failed unexpectedly. Next: try again once; if it "
            "fails again, tell the user."
        )
    if _VALIDATION_HEAD.match(rest):
        problems = "; ".join(
            f"{_api_field_name(m.group('field'))}: {m.group('msg')}"
            for m in _VALIDATION_ITEM.finditer(rest)
        )
        return (
            f"[invalid_arguments] {problems or 'the arguments do not match the schema'}. "
            "Next: fix these arguments (see the tool's input schema) and call again."
        )
    return rest


async def mirror_freshness_notes(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Append what a mirror said about the freshness of this call's answer (if anything)."""
    from screvi_mcp.mirror.notes import call_notes

    notes: list[str] = []
    token = call_notes.set(notes)
    try:
        result = await call_next(ctx)
    finally:
        call_notes.reset(token)
    if notes and isinstance(result, dict) and isinstance(result.get("content"), list):
        result["content"].append({"type": "text", "text": "Note: " + " ".join(notes)})
    return result


async def tidy_tool_errors(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    result = await call_next(ctx)
    is_tool_call = getattr(ctx, "method", None) == "tools/call"
    if is_tool_call and isinstance(result, dict) and result.get("isError"):
        for block in result.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                block["text"] = _tidy(str(block.get("text", "")))
    return result
