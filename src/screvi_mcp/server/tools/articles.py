"""Articles toolset: the read-later list. Save, list, read in chunks, triage, tag."""

from __future__ import annotations

import time
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from screvi_mcp import contract
from screvi_mcp.models import ArticleWithContent, ParseState
from screvi_mcp.server import render
from screvi_mcp.server.backend import Backend
from screvi_mcp.server.toolkit import (
    NOTHING_TO_CHANGE,
    DateTimeText,
    Format,
    Id,
    MaxChars,
    Page,
    PerPage,
    TagNames,
    TagsToRemove,
    ToolSpec,
    changed_fields,
    declare,
    reading,
    writing,
)

# About 2,000 tokens of English: enough to read in a few calls, small enough to keep context.
DEFAULT_CHUNK_CHARS = 8000
MAX_CHUNK_CHARS = 50000
POLL_INTERVAL_SECONDS = 1.0
Clearable = Literal["title", "excerpt", "note"]

TOOLS: list[ToolSpec] = []
tool = declare(TOOLS, "articles")


@tool(reading("List saved articles"))
async def list_articles(
    backend: Backend,
    ctx: Context,
    query: Annotated[str | None, Field(description="words in title, author or site")] = None,
    home_status: contract.HomeStatusName | None = None,
    status: contract.ArticleStatusName | None = None,
    favorite: bool | None = None,
    has_highlights: bool | None = None,
    tag: str | None = None,
    saved_since: DateTimeText | None = None,
    saved_before: DateTimeText | None = None,
    sort_by: contract.ArticleSortKey = "saved_at",
    order: contract.SortOrder = "desc",
    page: Page = 1,
    per_page: PerPage = contract.DEFAULT_PER_PAGE,
    response_format: Format = "concise",
) -> str:
    """List saved articles (the read-later list), newest first by default. Read one with
    read_article."""
    async with backend.call(ctx) as client:
        result = await client.list_articles(
            q=query,
            home_status=home_status,
            status=status,
            favorite=favorite,
            has_highlights=has_highlights,
            tag=tag,
            saved_since=saved_since,
            saved_before=saved_before,
            sort_by=sort_by,
            order=order,
            page=page,
            per_page=per_page,
        )
    return render.articles(result.data, result.pagination, response_format)


@tool(writing("Save an article", destructive=False, idempotent=True, open_world=True))
async def save_article(
    backend: Backend,
    ctx: Context,
    url: Annotated[str, Field(min_length=1, max_length=2048, description="http(s) URL")],
    tags: Annotated[list[str] | None, Field(description="tag names or ids")] = None,
    wait: Annotated[
        bool, Field(description="wait until the page is fetched and parsed (or fails)")
    ] = False,
    wait_seconds: Annotated[int, Field(ge=1, le=120)] = 30,
) -> str:
    """Save a web page to the read-later list. It is fetched in the background; pass
    wait=true to wait for it, then read_article. A URL already saved returns that article;
    a link to a single social post is saved as a highlight instead."""
    async with backend.call(ctx) as client:
        saved = await client.save_article(url, tags=tags)
    if saved.kind == "highlight":
        return (
            f"Saved the post as highlight {saved.id} (source_id {saved.source_id}); "
            "see it with get_highlight."
        )
    head = "Already saved" if saved.duplicate else "Saved"
    state = saved.parse_state or ParseState.queued
    if wait and state in (ParseState.queued, ParseState.fetching):
        state = await _wait_for_parse(backend, ctx, saved.id, wait_seconds)
    lines = [f"{head}: article {saved.id} (parse_state {state.value})."]
    if state is ParseState.parsed:
        lines.append(f'Read it with read_article(article_id="{saved.id}").')
    elif state is ParseState.failed:
        lines.append(
            "The page could not be extracted; read_article shows why. On the embedded "
            "library, saving the same URL again retries it."
        )
    else:
        lines.append("It is still being fetched; read_article will have it shortly.")
    return " ".join(lines)


async def _wait_for_parse(
    backend: Backend, ctx: Context, article_id: str, budget: float
) -> ParseState:
    started = time.monotonic()
    state = ParseState.queued
    while (elapsed := time.monotonic() - started) < budget:
        await ctx.report_progress(
            min(elapsed, budget), budget, f"article {article_id}: {state.value}"
        )
        await anyio.sleep(POLL_INTERVAL_SECONDS)
        async with backend.call(ctx, f"Article {article_id}") as client:
            article = await client.get_article(
                article_id, max_chars=contract.MIN_MAX_CHARS, highlights=False
            )
        state = article.parse_state
        if state in (ParseState.parsed, ParseState.failed):
            await ctx.report_progress(budget, budget, f"article {article_id}: {state.value}")
            break
    return state


@tool(reading("Read an article"))
async def read_article(
    backend: Backend,
    ctx: Context,
    article_id: Id,
    offset: Annotated[
        int,
        Field(
            ge=0,
            description="character to start at; use the offset the previous chunk gave to continue",
        ),
    ] = 0,
    max_chars: Annotated[
        MaxChars, Field(le=MAX_CHUNK_CHARS, description="chunk size in characters")
    ] = DEFAULT_CHUNK_CHARS,
    format: Annotated[
        Literal["text", "html"], Field(description="text (default) or sanitised html")
    ] = "text",
) -> str:
    """Read a saved article's body, one chunk at a time. The answer says where the chunk
    ends and the offset to continue from; stop when it says the article ends."""
    async with backend.call(ctx, f"Article {article_id}") as client:
        article = await client.get_article(
            article_id, format=format, offset=offset, max_chars=max_chars, highlights=False
        )
    if article.content is not None and offset > 0 and offset >= article.content_length:
        # Not an empty chunk read as success: say where the article ends.
        raise ToolError(
            f"[invalid_arguments] offset {offset} is past the end of article {article_id}, "
            f"whose {format} body is {article.content_length} characters long. Next: call "
            "again with a smaller offset, or offset=0 to read from the start."
        )
    return render.article_chunk(end_between_words(article))


def end_between_words(article: ArticleWithContent) -> ArticleWithContent:
    """The chunk cut back to its last whitespace, so no word is split between two chunks.

    Done here rather than by the API, so it holds for hosted Screvi too: the next offset is
    then `content_offset + len(content)`, and the chunks still join back to the exact body.
    A chunk with no whitespace in its second half (text without spaces, such as Chinese, or
    one enormous token) is left as it is rather than shrunk to little or nothing.
    """
    text = article.content
    if not text or not article.content_truncated or text[-1].isspace():
        return article
    cut = len(text)
    while cut > len(text) // 2 and not text[cut - 1].isspace():
        cut -= 1
    if cut <= len(text) // 2:
        return article
    return article.model_copy(update={"content": text[:cut]})


@tool(writing("Update an article", destructive=True, idempotent=True))
async def update_article(
    backend: Backend,
    ctx: Context,
    article_id: Id,
    home_status: Annotated[
        contract.HomeStatusName | None,
        Field(description="triage: inbox, later, or archive (articles cannot be deleted)"),
    ] = None,
    favorite: bool | None = None,
    title: Annotated[str | None, Field(max_length=contract.MAX_ARTICLE_TITLE)] = None,
    excerpt: Annotated[str | None, Field(max_length=contract.MAX_EXCERPT)] = None,
    note: Annotated[str | None, Field(max_length=contract.MAX_NOTE)] = None,
    tags: Annotated[
        list[str] | None, Field(description="replaces ALL tags; [] removes every tag")
    ] = None,
    clear: Annotated[
        list[Clearable], Field(description="fields to empty; omitted fields are unchanged")
    ] = [],  # noqa: B006 - pydantic copies defaults; the schema needs a literal []
) -> str:
    """Triage or edit a saved article: move it (inbox/later/archive), favourite it, edit
    title, excerpt or note, replace its tags. Only the arguments given change."""
    changes = changed_fields(
        {
            "home_status": home_status,
            "favorite": favorite,
            "title": title,
            "excerpt": excerpt,
            "note": note,
            "tags": tags,
        },
        clear,
    )
    if not changes:
        return NOTHING_TO_CHANGE
    async with backend.call(ctx, f"Article {article_id}") as client:
        item = await client.update_article(article_id, **changes)
    return "Updated:\n" + render.article(item)


@tool(writing("Tag an article", destructive=False, idempotent=True))
async def add_article_tags(backend: Backend, ctx: Context, article_id: Id, tags: TagNames) -> str:
    """Add tags to a saved article, keeping its other tags."""
    async with backend.call(ctx, f"Article {article_id}") as client:
        result = await client.add_article_tags(article_id, tags)
    return render.tag_list(result, f"Article {article_id}")


@tool(writing("Untag an article", destructive=True, idempotent=True))
async def remove_article_tags(
    backend: Backend, ctx: Context, article_id: Id, tags: TagsToRemove
) -> str:
    """Remove tags from a saved article."""
    async with backend.call(ctx, f"Article {article_id}") as client:
        result = await client.remove_article_tags(article_id, tags)
    return render.tag_list(result, f"Article {article_id}")
