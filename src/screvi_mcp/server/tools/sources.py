"""Sources toolset: books, podcasts, videos, tweets, personal notes, collections."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from screvi_mcp import contract
from screvi_mcp.client import ConflictError, ScreviClient, ScreviError
from screvi_mcp.server import render
from screvi_mcp.server.backend import Backend
from screvi_mcp.server.toolkit import (
    NOTHING_TO_CHANGE,
    DateTimeText,
    Format,
    Id,
    Page,
    PerPage,
    ToolSpec,
    changed_fields,
    declare,
    reading,
    writing,
)

ListType = contract.SourceListType
CreatableType = contract.CreatableSourceType
Name = Annotated[str, Field(min_length=1, max_length=contract.MAX_SOURCE_NAME)]
Author = Annotated[str, Field(max_length=contract.MAX_AUTHOR)]
SourceNote = Annotated[
    str, Field(max_length=contract.MAX_NOTE, description="note on the source itself")
]
Code = Annotated[str, Field(max_length=contract.MAX_BOOK_CODE)]
Clearable = Literal["author", "url", "image_url", "note", "isbn", "asin", "published_date"]

TOOLS: list[ToolSpec] = []
tool = declare(TOOLS, "sources")


@tool(reading("List sources"))
async def list_sources(
    backend: Backend,
    ctx: Context,
    type: Annotated[ListType | None, Field(description="only this type")] = None,
    search: Annotated[str | None, Field(description="name or author contains this")] = None,
    include_empty: Annotated[
        bool, Field(description="also saved articles without highlights")
    ] = False,
    updated_since: DateTimeText | None = None,
    page: Page = 1,
    per_page: PerPage = contract.DEFAULT_PER_PAGE,
    response_format: Format = "concise",
) -> str:
    """List the sources highlights come from (books, articles, podcasts, ...) with their
    highlight counts. Use get_source to read one source's highlights."""
    async with backend.call(ctx) as client:
        result = await client.list_sources(
            type=type,
            search=search,
            include_empty=include_empty or None,
            updated_since=updated_since,
            include_metadata=response_format == "detailed" or None,
            page=page,
            per_page=per_page,
        )
    return render.sources(result.data, result.pagination, response_format)


@tool(reading("Get a source"))
async def get_source(
    backend: Backend,
    ctx: Context,
    source_id: Id,
    page: Page = 1,
    per_page: Annotated[
        PerPage, Field(description="highlights per page")
    ] = contract.DEFAULT_SOURCE_HIGHLIGHTS_PER_PAGE,
    response_format: Format = "concise",
) -> str:
    """Get a source (or saved article, same id) with its highlights in reading order."""
    async with backend.call(ctx, f"Source {source_id}") as client:
        result = await client.get_source(source_id, page=page, per_page=per_page)
    source = result.data
    body = render.highlights(source.highlights, result.pagination, response_format)
    return render.source(source, response_format) + "\n\n" + body


@tool(writing("Create a source", destructive=False, idempotent=False))
async def create_source(
    backend: Backend,
    ctx: Context,
    name: Name,
    type: Annotated[CreatableType, Field(description="web articles: use save_article")],
    author: Author | None = None,
    url: str | None = None,
    image_url: str | None = None,
    note: SourceNote | None = None,
    isbn: Code | None = None,
    asin: Code | None = None,
    published_date: Annotated[str | None, Field(description="YYYY-MM-DD")] = None,
) -> str:
    """Create a source to add highlights to. Only one `self` (personal notes) source
    exists; creating another fails with its id."""
    async with backend.call(ctx) as client:
        item = await client.create_source(
            name,
            type,
            author=author,
            url=url,
            image_url=image_url,
            note=note,
            isbn=isbn,
            asin=asin,
            published_date=published_date,
        )
    return "Created:\n" + render.source(item)


@tool(writing("Update a source", destructive=True, idempotent=True))
async def update_source(
    backend: Backend,
    ctx: Context,
    source_id: Id,
    name: Name | None = None,
    author: Author | None = None,
    url: str | None = None,
    image_url: str | None = None,
    note: SourceNote | None = None,
    isbn: Code | None = None,
    asin: Code | None = None,
    published_date: Annotated[str | None, Field(description="YYYY-MM-DD")] = None,
    clear: Annotated[
        list[Clearable], Field(description="fields to empty; omitted fields are unchanged")
    ] = [],  # noqa: B006 - pydantic copies defaults; the schema needs a literal []
) -> str:
    """Change a source's name, author, cover, note and other details (not its type).
    Only the arguments given change; list fields to empty in `clear`."""
    changes = changed_fields(
        {
            "name": name,
            "author": author,
            "url": url,
            "image_url": image_url,
            "note": note,
            "isbn": isbn,
            "asin": asin,
            "published_date": published_date,
        },
        clear,
    )
    if not changes:
        return NOTHING_TO_CHANGE
    async with backend.call(ctx, f"Source {source_id}") as client:
        item = await client.update_source(source_id, **changes)
    return "Updated:\n" + render.source(item)


@tool(writing("Delete a source", destructive=True, idempotent=True))
async def delete_source(
    backend: Backend,
    ctx: Context,
    source_id: Id,
    cascade: Annotated[
        bool, Field(description="also delete its highlights; required if it has any")
    ] = False,
) -> str:
    """Delete a source. Fails while it has highlights unless cascade=true, which deletes
    them too. Saved articles cannot be deleted (archive them with update_article)."""
    async with backend.call(ctx, f"Source {source_id}") as client:
        try:
            result = await client.delete_source(source_id, cascade=cascade)
        except ConflictError:
            if await _is_article(client, source_id):
                # The usual 409 advice (cascade=true) cannot help: no article is deletable.
                raise ToolError(
                    f"[conflict] {source_id} is a saved article, and articles cannot be "
                    "deleted, with or without cascade. Next: archive it with update_article("
                    f'article_id="{source_id}", home_status="archive"), or ask the user.'
                ) from None
            raise
    removed = result.get("highlights_deleted")
    extra = f" and {removed} of its highlights" if removed else ""
    return f"Deleted source {source_id}{extra}."


async def _is_article(client: ScreviClient, source_id: str) -> bool:
    """Whether `source_id` is a saved article (one extra read, only after a refused delete)."""
    try:
        await client.get_article(source_id, max_chars=contract.MIN_MAX_CHARS, highlights=False)
    except ScreviError:
        return False
    return True
