"""search_articles: search inside saved articles' text (passages), read from the match.

Embedded library and mirrors: hybrid keyword + meaning search over passages through the
library's extension endpoint (screvi_mcp/extensions.py). Hosted Screvi has no such endpoint,
so there the tool never calls it: it falls back to list_articles' title/author/site search and
says so (docs/articles.md).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from screvi_mcp import contract
from screvi_mcp.client import InvalidParameterError, ScreviClient
from screvi_mcp.extensions import ARTICLE_SEARCH_MAX_PER_PAGE, PassageHit, PassagePage
from screvi_mcp.server import render
from screvi_mcp.server.backend import Backend
from screvi_mcp.server.errors import describe
from screvi_mcp.server.toolkit import (
    DateTimeText,
    Format,
    Page,
    Query,
    ToolSpec,
    declare,
    reading,
)
from screvi_mcp.server.tools.articles import MAX_CHUNK_CHARS

TOOLS: list[ToolSpec] = []
tool = declare(TOOLS, "articles")

SNIPPET_CHARS = 240
# read_article reads at least 1000 characters; a little past the passage gives its ending.
READ_MARGIN = 200
_WORD = re.compile(r"[^\W_]{3,}")

HOSTED_NOTE = (
    "Note: hosted Screvi cannot search inside article text, so these are articles whose "
    "title, author or site contains the query (list_articles' q). For full-text and meaning "
    "search inside saved articles, run `screvi-mcp sync` and serve the mirror (--mirror)."
)


@tool(reading("Search inside saved articles"))
async def search_articles(
    backend: Backend,
    ctx: Context,
    query: Annotated[Query, Field(description="words or meaning")],
    tag: str | None = None,
    status: contract.ArticleStatusName | None = None,
    favorite: bool | None = None,
    saved_since: DateTimeText | None = None,
    saved_before: DateTimeText | None = None,
    min_relevance: Annotated[
        float | None,
        Field(ge=0, le=1, description="cosine a meaning-only match needs (default 0.3)"),
    ] = None,
    page: Page = 1,
    per_page: Annotated[int, Field(ge=1, le=ARTICLE_SEARCH_MAX_PER_PAGE)] = 5,
    response_format: Format = "concise",
) -> str:
    """Search the text of saved articles (keywords + meaning), best article first, each
    with its best passage and the read_article offset/max_chars to open it there."""
    if not query.strip():
        problem = {"query": "must contain words, not only spaces"}
        raise ToolError(
            describe(InvalidParameterError("Invalid query", status=400, fields=problem))
        )
    filters: dict[str, Any] = {
        "tag": tag,
        "status": status,
        "favorite": favorite,
        "saved_since": saved_since,
        "saved_before": saved_before,
        "page": page,
        "per_page": per_page,
    }
    if backend.config.hosted:
        async with backend.call(ctx) as client:
            return await _by_title(client, query, response_format, filters)
    async with backend.call(ctx) as client:
        result = await client.search_articles(query, min_relevance=min_relevance, **filters)
    return _render(result, query, response_format)


async def _by_title(client: ScreviClient, query: str, fmt: Format, filters: dict[str, Any]) -> str:
    """Hosted Screvi: list_articles' `q` (title, author, site), said to be only that."""
    listed, used = await client.list_articles(q=query, **filters), query
    word = max(_WORD.findall(query), key=len, default="")
    if listed.pagination.total == 0 and len(word) >= 4 and word != query.strip():
        # A sentence rarely sits whole in a title: its longest word may.
        listed, used = await client.list_articles(q=word, **filters), word
    text = render.articles(listed.data, listed.pagination, fmt)
    matched = "" if used == query else f' (titles matching "{used}", the longest word)'
    return f"{text}{matched}\n{HOSTED_NOTE}"


def _render(result: PassagePage, query: str, fmt: str) -> str:
    blocks = [_hit(hit, query, fmt) for hit in result.data]
    text = render.listing(blocks, result.pagination, "articles", "No saved article matches.")
    notes = []
    if not result.semantic:
        notes.append("Only exact words matched here (search by meaning is unavailable).")
    elif result.passages_waiting:
        notes.append(
            f"{result.passages_waiting} passages are still being indexed by meaning (usually "
            "seconds); if nothing fits, ask again shortly."
        )
    if result.pagination.total == 0:
        lower = ", a lower min_relevance" if result.semantic else ""
        notes.append(f"Try other words{lower}, or list_articles by title.")
    return "\n".join([text, *notes])


def _hit(hit: PassageHit, query: str, fmt: str) -> str:
    article = hit.article
    by = " · ".join(x for x in (article.author, article.source_domain) if x)
    head = f"{article.title or article.url}" + (f" ({by})" if by else "")
    passage = hit.passage
    max_chars = min(max(contract.MIN_MAX_CHARS, passage.length + READ_MARGIN), MAX_CHUNK_CHARS)
    shown = passage.text if fmt == "detailed" else _snippet(passage.text, query)
    score = f"{hit.match_type.value}" + (
        f", similarity {hit.similarity:.2f}" if hit.similarity is not None else ""
    )
    lines = [
        head,
        f"   article {article.id} · {score}",
        f'   "{shown}"',
        f'   read_article(article_id="{article.id}", offset={passage.offset}, '
        f"max_chars={max_chars})",
    ]
    if fmt == "detailed":
        lines.insert(2, "   " + render.article(article, "concise").split("\n", 2)[-1].strip())
    return "\n".join(lines)


def _snippet(text: str, query: str) -> str:
    """About SNIPPET_CHARS of the passage, around the first query word it holds."""
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    lowered = flat.casefold()
    positions = [lowered.find(w.casefold()) for w in _WORD.findall(query)]
    first = min((p for p in positions if p >= 0), default=0)
    start = max(0, min(first - SNIPPET_CHARS // 3, len(flat) - SNIPPET_CHARS))
    if start:
        start = flat.find(" ", start) + 1 or start
    end = start + SNIPPET_CHARS
    end = flat.rfind(" ", start, end) if end < len(flat) else len(flat)
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
