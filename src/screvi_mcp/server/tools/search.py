"""Search toolset: hybrid semantic + keyword search over highlights."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from screvi_mcp.client import InvalidParameterError
from screvi_mcp.contract import DEFAULT_MIN_RELEVANCE
from screvi_mcp.models import SearchPage, SearchResult
from screvi_mcp.server import render
from screvi_mcp.server.backend import Backend
from screvi_mcp.server.errors import describe
from screvi_mcp.server.toolkit import (
    Format,
    Page,
    Query,
    SearchPerPage,
    SourceTypeName,
    ToolSpec,
    declare,
    reading,
)

TOOLS: list[ToolSpec] = []
tool = declare(TOOLS, "search")


@tool(reading("Search highlights"))
async def search_highlights(
    backend: Backend,
    ctx: Context,
    query: Annotated[Query, Field(description="what to look for, in natural language or keywords")],
    source: Annotated[
        str | None, Field(description="only sources whose name or author contains this")
    ] = None,
    tag: Annotated[str | None, Field(description="only highlights with this tag")] = None,
    types: Annotated[
        list[SourceTypeName] | None, Field(description="only these source types")
    ] = None,
    favorite: bool | None = None,
    min_relevance: Annotated[
        float | None,
        Field(
            ge=0,
            le=1,
            description=f"minimum similarity of a semantic match, default {DEFAULT_MIN_RELEVANCE}"
            "; lower it (e.g. 0.5) when results are thin, raise it for precision. In the "
            "embedded library every model's matches share one calibrated 0-1 scale: the "
            "default keeps nearly every match that may be relevant, about 0.86 is even odds",
        ),
    ] = None,
    verify: Annotated[
        bool,
        Field(
            description="re-check semantic matches with a relevance model and fill "
            "verified_relevance, a probability; the hosted service drops off-topic ones, "
            "the embedded library drops none and keeps the ranking's order; about +0.5 s"
        ),
    ] = False,
    page: Page = 1,
    per_page: SearchPerPage = 10,
    response_format: Format = "concise",
) -> str:
    """Search the user's highlights by meaning and keywords (hybrid), best first.
    Start here for any question about what the user has read. Follow a hit's source_id
    with get_source, or an article's id with read_article, for context."""
    if not query.strip():  # the API would name its own parameter, `q`
        problem = {"query": "must contain words, not only spaces"}
        blank = InvalidParameterError("Invalid query", status=400, fields=problem)
        raise ToolError(describe(blank))
    async with backend.call(ctx) as client:
        result = await client.search(
            query,
            source=source,
            tag=tag,
            types=types,
            favorite=favorite,
            min_relevance=min_relevance,
            verify=verify or None,
            page=page,
            per_page=per_page,
        )
    text = render.highlights(result.data, result.pagination, response_format, "matches")
    if verify:
        text += doubted_note(result.data)
    return text + _notes(result, min_relevance)


def _notes(result: SearchPage, min_relevance: float | None) -> str:
    """What the agent should know beside the matches: keyword-only search, an empty
    answer at a high threshold, highlights not yet searchable by meaning."""
    notes = ""
    if result.keyword_only_reason:
        # Only exact words can match: min_relevance changes nothing, so never suggest it.
        notes += (
            f" Note: search here matches keywords only ({result.keyword_only_reason}), so "
            "only highlights containing these words are found; try other words, and tell "
            "the user if search by meaning is needed."
        )
    elif result.pagination.total == 0 and (min_relevance is None or min_relevance > 0.5):
        notes += " Try other words, or a lower min_relevance such as 0.5."
    if result.embedding_pending:
        lag = result.embedding_lag_seconds
        behind = "" if lag is None else f", about {max(1, round(lag))} s behind"
        notes += (
            f" Note: {result.embedding_pending} recently written highlights are not "
            f"searchable by meaning yet{behind}; keyword matches include them. Search again "
            "later if a recent highlight is missing."
        )
    return notes


def doubted_note(results: list[SearchResult]) -> str:
    """How many of the page's checked matches verify scored under 0.5: its probability is
    calibrated (docs/search.md), so under 0.5 a match is more likely off-topic than not;
    the concise format shows no scores, and the embedded library drops none."""
    judged = [r.verified_relevance for r in results if r.verified_relevance is not None]
    if not judged:
        return ""
    doubted = sum(p < 0.5 for p in judged)
    return (
        f" Relevance check: {doubted} of the {len(judged)} checked matches on this page"
        " scored under 0.5 (likely not relevant)."
    )
