"""An agent framework as hosts use it: pydantic-ai loads the Claude Desktop config
(`load_mcp_toolsets`), spawns both servers over stdio, and a scripted model (FunctionModel)
calls the tools turn by turn, choosing each call from what the previous tool answered, as an
LLM would. A tool error reaches the model the way pydantic-ai delivers it: the server's text,
in a tool return whose outcome is not "success", inviting the model to try again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_harness import (
    ARTICLE_ID,
    ID,
    NEXT_OFFSET,
    SEARCH_QUERY,
    Library,
    article_url,
    check_saved,
    check_scenario,
    first_match,
    highlight_tags,
)
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset, load_mcp_toolsets
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import WrapperToolset

pytestmark = pytest.mark.e2e

TAG = "e2e-pydantic-ai"
START_TIMEOUT_SECONDS = 60.0


def last_result(messages: list[ModelMessage]) -> tuple[str, str] | None:
    """(tool name, text) of the latest tool answer the model has been shown."""
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in reversed(message.parts):
            if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name:
                content = part.content if isinstance(part.content, str) else str(part.content)
                return part.tool_name, content
    return None


def scripted_model(article: str, seen_tools: list[str]) -> FunctionModel:
    """A model that follows the scenario; every id and offset comes from an earlier answer."""
    picked: dict[str, str] = {}

    def turn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not seen_tools:
            seen_tools.extend(tool.name for tool in info.function_tools)
        previous = last_result(messages)

        def call(tool: str, **args: Any) -> ModelResponse:
            return ModelResponse(parts=[ToolCallPart(tool, args)])

        if previous is None:
            return call("screvi_search_highlights", query=SEARCH_QUERY)
        tool, text = previous
        if tool == "screvi_search_highlights":
            picked["highlight"] = first_match(ID, text, "highlight id")
            return call("screvi_save_article", url=article, wait=True, wait_seconds=30)
        if tool == "screvi_save_article":
            picked["article"] = first_match(ARTICLE_ID, text, "article id")
            return call("screvi_read_article", article_id=picked["article"])
        if tool == "screvi_read_article" and "More remains" in text:
            offset = int(first_match(NEXT_OFFSET, text, "next offset"))
            return call("screvi_read_article", article_id=picked["article"], offset=offset)
        if tool == "screvi_read_article":
            return call("screvi_add_highlight_tags", highlight_id=picked["highlight"], tags=[TAG])
        if tool == "screvi_add_highlight_tags":
            return call(
                "screvi-readonly_create_highlight",
                content="Written through a read-only key: this must be refused.",
            )
        return ModelResponse(parts=[TextPart(f"Done; the last answer was: {text}")])

    return FunctionModel(turn)


def tool_outcomes(messages: list[ModelMessage]) -> list[tuple[str, dict[str, Any]]]:
    """Each tool answer in order, as (name without the server prefix, outcome)."""
    outcomes = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.tool_name:
                # A tool error comes back to the model as a return whose outcome is "retried".
                outcome = {"isError": part.outcome != "success", "text": str(part.content)}
            elif isinstance(part, RetryPromptPart) and part.tool_name:
                outcome = {"isError": True, "text": str(part.content)}
            else:
                continue
            outcomes.append((part.tool_name.split("_", 1)[1], outcome))
    return outcomes


async def test_pydantic_ai_agent_runs_the_scenario(
    library: Library, site: str, stdio_config: Path
) -> None:
    toolsets = load_mcp_toolsets(stdio_config)
    assert len(toolsets) == 2
    screvi = toolsets[0]
    assert isinstance(screvi, WrapperToolset) and isinstance(screvi.wrapped, MCPToolset)
    # pydantic-ai gives each server 5 s to answer `initialize`; a stdio server (an interpreter
    # and the SDK) needs longer on a busy 2-core machine. This test is about the config and
    # the calls, not start-up speed, so the handshake gets the harness's start-up bound.
    for toolset in toolsets:
        assert isinstance(toolset, WrapperToolset) and isinstance(toolset.wrapped, MCPToolset)
        assert isinstance(toolset.wrapped.client._init_timeout, float)  # still the field's name
        toolset.wrapped.client._init_timeout = START_TIMEOUT_SECONDS
    seen_tools: list[str] = []
    agent = Agent(scripted_model(article_url(site, "pydantic-ai"), seen_tools), toolsets=toolsets)

    async with agent:  # one server process per config entry for the whole session
        result = await agent.run("Find what I highlighted about remembering what I read.")
        skill = await screvi.wrapped.read_resource("screvi://skill.md")

    outcomes = tool_outcomes(result.all_messages())
    saves = [outcome for name, outcome in outcomes if name == "save_article"]
    assert saves, outcomes
    check_saved(saves[0])
    steps = [name for name, _ in outcomes]
    assert steps == [
        "search_highlights",
        "save_article",
        "read_article",
        "read_article",
        "add_highlight_tags",
        "create_highlight",
    ], steps
    (search, save, chunk1, chunk2, tag, error) = (outcome for _, outcome in outcomes)
    # The model saw the server's own words, code first.
    assert result.output.startswith("Done; the last answer was: [insufficient_scope]")

    prefixes = {name.split("_", 1)[0] for name in seen_tools}
    assert prefixes == {"screvi", "screvi-readonly"}
    report: dict[str, Any] = {
        "tools": [name.split("_", 1)[1] for name in seen_tools if name.startswith("screvi_")],
        "search": search,
        "highlight_id": first_match(ID, search["text"], "highlight id"),
        "save": save,
        "chunk1": chunk1,
        "chunk2": chunk2,
        "tag": tag,
        "skill": skill,
        "error": error,
    }
    check_scenario(report, tag=TAG)
    assert TAG in highlight_tags(library.api_url, library.write_key, report["highlight_id"])
