"""Arguments the SDK would drop or fail on, answered with what to do instead.

The SDK's argument models ignore names they do not know, so `limit` on search_highlights
was silently dropped, and `type` on update_source turned into "Nothing to change". Prompts
with a bad argument failed as an internal error. This middleware runs before the SDK looks
at a call: unknown tool arguments are a tool error naming them and listing the accepted
ones; a prompt's unknown, missing or invalid arguments are an invalid-params error with a
next step. It costs `tools/list` nothing: the schemas are unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server import MCPServer
from mcp.server.context import ServerMiddleware
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

# Why an argument some agents try is not there, where a reason helps them more than a list.
ARGUMENT_HINTS: dict[tuple[str, str], str] = {
    ("update_source", "type"): "a source's type is fixed when it is created",
    ("search_highlights", "limit"): "per_page sets how many results a page has",
    ("list_highlights", "limit"): "per_page sets how many results a page has",
    ("list_sources", "limit"): "per_page sets how many results a page has",
    ("list_articles", "limit"): "per_page sets how many results a page has",
}


def _names(names: list[str] | set[str]) -> str:
    return ", ".join(sorted(names))


def unknown_tool_arguments_message(tool: str, unknown: set[str], accepted: list[str]) -> str:
    keys = sorted((tool, name) for name in unknown)
    hints = [ARGUMENT_HINTS[key] for key in keys if key in ARGUMENT_HINTS]
    why = f" ({'; '.join(hints)})" if hints else ""
    plural = "s" if len(unknown) > 1 else ""
    accepts = ", ".join(accepted) if accepted else "no arguments"
    return (
        f"[invalid_arguments] {tool} has no argument{plural} {_names(unknown)}{why}. It "
        f"accepts: {accepts}. Next: call it again with only those arguments."
    )


def argument_checks(
    mcp: MCPServer, hidden: Mapping[str, str] | None = None
) -> ServerMiddleware[Any]:
    """The middleware for `mcp` (built after its tools and prompts are registered).

    `hidden` maps the tools this server does not offer to why (a toolset left out, or
    read-only mode), so that calling one is answered with the real reason.
    """
    why_hidden = dict(hidden or {})

    async def check(ctx: Any, call_next: Any) -> Any:
        method = getattr(ctx, "method", None)
        params: Mapping[str, Any] = getattr(ctx, "params", None) or {}
        if method == "tools/call":
            refusal = _tool_call_refusal(mcp, params, why_hidden)
            if refusal is not None:
                text = TextContent(type="text", text=refusal)
                return CallToolResult(content=[text], is_error=True)
        elif method == "prompts/get":
            return await _get_prompt(mcp, params, ctx, call_next)
        return await call_next(ctx)

    return check


def _tool_call_refusal(
    mcp: MCPServer, params: Mapping[str, Any], hidden: Mapping[str, str]
) -> str | None:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if not isinstance(name, str) or not isinstance(arguments, Mapping):
        return None  # malformed: the SDK's own validation answers
    tool = mcp._tool_manager.get_tool(name)
    if tool is None:
        if name in hidden:
            return (
                f"[unknown_tool] {name} is not offered by this server: {hidden[name]}. "
                "Next: use one of the tools it lists, or tell the user how to enable it."
            )
        return (
            f"[unknown_tool] This server has no tool named {name}. Next: use one of the "
            "tools it lists."
        )
    properties: Mapping[str, Any] = tool.parameters.get("properties") or {}
    if all(argument in properties for argument in arguments):
        return None  # the usual case, checked without building lists and sets on every call
    accepted = list(properties)
    return unknown_tool_arguments_message(name, set(arguments) - set(accepted), accepted)


async def _get_prompt(
    mcp: MCPServer, params: Mapping[str, Any], ctx: Any, call_next: Callable[[Any], Awaitable[Any]]
) -> Any:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    prompt = mcp._prompt_manager.get_prompt(name) if isinstance(name, str) else None
    if prompt is None:
        names = _names({each.name for each in mcp._prompt_manager.list_prompts()})
        raise MCPError(
            INVALID_PARAMS,
            f"There is no prompt named {name!r}. Next: use one of these: {names}.",
        )
    declared = prompt.arguments or []
    takes = (
        ", ".join(
            f"{each.name} ({'required' if each.required else 'optional'})" for each in declared
        )
        or "no arguments"
    )
    unknown = set(arguments) - {each.name for each in declared}
    missing = [each.name for each in declared if each.required and each.name not in arguments]
    if unknown or missing:
        problem = (
            f"unknown argument(s) {_names(unknown)}"
            if unknown
            else f"missing required argument(s) {', '.join(missing)}"
        )
        raise MCPError(
            INVALID_PARAMS,
            f"Prompt {name}: {problem}. It takes: {takes}. Next: get it again with those.",
        )
    try:
        return await call_next(ctx)
    except MCPError as error:
        if error.code != INVALID_PARAMS and "Internal" not in error.message:
            raise
        problem = error.message
    except Exception as error:  # the SDK's rendering failure (a value that does not validate)
        problem = _validation_problems(error) or "a value does not validate"
    raise MCPError(
        INVALID_PARAMS,
        f"Prompt {name}: {problem}. It takes: "
        f"{takes}; see each argument's description for the values allowed. Next: get it "
        "again with corrected values.",
    )


def _validation_problems(error: BaseException) -> str:
    """`limit: Input should be a valid integer`, from the ValidationError behind `error`."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ValidationError):
            return "; ".join(
                f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
                for item in seen.errors()
            )
        seen = seen.__cause__ or seen.__context__
    return ""
