"""Highlights toolset: list, get, random, create (one or bulk), update, delete, tag."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from screvi_mcp.contract import DEFAULT_PER_PAGE, MAX_BULK, MAX_HIGHLIGHT_TEXT
from screvi_mcp.server import render
from screvi_mcp.server.backend import Backend
from screvi_mcp.server.highlight_context import in_context
from screvi_mcp.server.toolkit import (
    NOTHING_TO_CHANGE,
    DateTimeText,
    Format,
    Id,
    Page,
    PerPage,
    RandomCount,
    SourceTypeName,
    TagNames,
    TagsToRemove,
    ToolSpec,
    changed_fields,
    clean_id,
    declare,
    reading,
    writing,
)

Content = Annotated[
    str, Field(min_length=1, max_length=MAX_HIGHLIGHT_TEXT, description="highlight text")
]
Note = Annotated[str, Field(max_length=MAX_HIGHLIGHT_TEXT, description="the user's note on it")]
Location = Annotated[int, Field(ge=0, description="position in the source (page, location)")]
Clearable = Literal["note", "url", "location", "date", "metadata"]


class NewHighlightInput(BaseModel):
    """One highlight for create_highlights_bulk."""

    model_config = ConfigDict(extra="forbid")
    content: Content
    note: Note | None = None
    source_id: Annotated[str | None, BeforeValidator(clean_id)] = Field(
        None, description="existing source id"
    )
    article_id: Annotated[str | None, BeforeValidator(clean_id)] = Field(
        None, description="saved article id (not with source_id)"
    )
    tags: list[str] | None = Field(None, description="tag names or ids")
    favorite: bool | None = None
    url: str | None = None
    location: Location | None = None
    date: DateTimeText | None = None


TOOLS: list[ToolSpec] = []
tool = declare(TOOLS, "highlights")


@tool(reading("List highlights"))
async def list_highlights(
    backend: Backend,
    ctx: Context,
    source_id: Annotated[Id | None, Field(description="only this source or article")] = None,
    tag: Annotated[str | None, Field(description="only highlights with this tag name")] = None,
    favorite: bool | None = None,
    updated_since: Annotated[
        DateTimeText | None, Field(description="only highlights changed after this")
    ] = None,
    include_deleted: Annotated[
        bool, Field(description="also list deleted ones (marked DELETED), for syncing")
    ] = False,
    page: Page = 1,
    per_page: PerPage = DEFAULT_PER_PAGE,
    response_format: Format = "concise",
) -> str:
    """List highlights, most recent first, optionally filtered by source, tag or favorite.
    To find highlights about a topic use search_highlights instead."""
    async with backend.call(ctx) as client:
        result = await client.list_highlights(
            source_id=source_id,
            tag=tag,
            favorite=favorite,
            updated_since=updated_since,
            include_deleted=include_deleted or None,
            include_metadata=response_format == "detailed" or None,
            page=page,
            per_page=per_page,
        )
    return render.highlights(result.data, result.pagination, response_format)


@tool(reading("Get a highlight"))
async def get_highlight(
    backend: Backend,
    ctx: Context,
    highlight_id: Id,
    context: Annotated[
        bool, Field(description="from a saved article: add the paragraph around it")
    ] = False,
) -> str:
    """Get one highlight in full: text, note, source, tags, dates and metadata."""
    async with backend.call(ctx, f"Highlight {highlight_id}") as client:
        item = await client.get_highlight(highlight_id, include_metadata=True)
        if not context:
            return render.highlight(item, "detailed")
        return render.highlight(item, "detailed") + await in_context(client, item)


@tool(reading("Random highlights").model_copy(update={"idempotent_hint": False}))
async def get_random_highlights(
    backend: Backend,
    ctx: Context,
    count: RandomCount = 1,
    favorite: bool | None = None,
    types: Annotated[
        list[SourceTypeName] | None, Field(description="only these source types")
    ] = None,
    tag: str | None = None,
    source_id: Id | None = None,
) -> str:
    """Pick random highlights (for review or inspiration), optionally filtered."""
    async with backend.call(ctx, "A matching highlight") as client:
        items = await client.get_random_highlights(
            count=count, favorite=favorite, types=types, tag=tag, source_id=source_id
        )
    return render.highlights(items, None)


@tool(writing("Create a highlight", destructive=False, idempotent=False))
async def create_highlight(
    backend: Backend,
    ctx: Context,
    content: Content,
    note: Note | None = None,
    source_id: Annotated[
        Id | None, Field(description="add to this source (see list_sources)")
    ] = None,
    article_id: Annotated[
        Id | None, Field(description="add to this saved article (not with source_id)")
    ] = None,
    tags: Annotated[
        list[str] | None, Field(description="tag names (created if new) or ids")
    ] = None,
    favorite: bool | None = None,
    url: str | None = None,
    location: Location | None = None,
    date: Annotated[DateTimeText | None, Field(description="when it was highlighted")] = None,
) -> str:
    """Create one highlight. Without source_id or article_id it goes to the user's
    Personal notes source.
    For several at once use create_highlights_bulk (one request instead of many)."""
    async with backend.call(ctx) as client:
        item = await client.create_highlight(
            content,
            note=note,
            source_id=source_id,
            article_id=article_id,
            tags=tags,
            favorite=favorite,
            url=url,
            location=location,
            date=date,
        )
    return "Created:\n" + render.highlight(item)


@tool(writing("Create highlights in bulk", destructive=False, idempotent=False))
async def create_highlights_bulk(
    backend: Backend,
    ctx: Context,
    highlights: Annotated[list[NewHighlightInput], Field(min_length=1, max_length=MAX_BULK)],
) -> str:
    """Create up to 100 highlights in one request, all or nothing: if any item is invalid
    none is written and the error names it as highlights[i].field."""
    items: list[dict[str, Any]] = [h.model_dump(exclude_none=True) for h in highlights]
    async with backend.call(ctx) as client:
        created = await client.create_highlights_bulk(items)
    ids = "\n".join(f"{index + 1}. {item.id}" for index, item in enumerate(created))
    return f"Created {render.counted(len(created), 'highlights')}:\n{ids}"


@tool(writing("Update a highlight", destructive=True, idempotent=True))
async def update_highlight(
    backend: Backend,
    ctx: Context,
    highlight_id: Id,
    content: Content | None = None,
    note: Note | None = None,
    favorite: bool | None = None,
    url: str | None = None,
    location: Location | None = None,
    date: DateTimeText | None = None,
    tags: Annotated[
        list[str] | None, Field(description="replaces ALL tags; [] removes every tag")
    ] = None,
    clear: Annotated[
        list[Clearable],
        Field(description='fields to empty, e.g. ["note"]; omitted fields are unchanged'),
    ] = [],  # noqa: B006 - pydantic copies defaults; the schema needs a literal []
) -> str:
    """Change a highlight. Only the arguments given change; list fields to empty in
    `clear`. To add or remove single tags use add_highlight_tags / remove_highlight_tags."""
    changes = changed_fields(
        {
            "content": content,
            "note": note,
            "favorite": favorite,
            "url": url,
            "location": location,
            "date": date,
            "tags": tags,
        },
        clear,
    )
    if not changes:
        return NOTHING_TO_CHANGE
    async with backend.call(ctx, f"Highlight {highlight_id}") as client:
        item = await client.update_highlight(highlight_id, **changes)
    return "Updated:\n" + render.highlight(item)


@tool(writing("Delete a highlight", destructive=True, idempotent=True))
async def delete_highlight(backend: Backend, ctx: Context, highlight_id: Id) -> str:
    """Delete a highlight (soft: it leaves lists and search; repeating is harmless)."""
    async with backend.call(ctx, f"Highlight {highlight_id}") as client:
        await client.delete_highlight(highlight_id)
    return f"Deleted highlight {highlight_id}."


@tool(writing("Tag a highlight", destructive=False, idempotent=True))
async def add_highlight_tags(
    backend: Backend, ctx: Context, highlight_id: Id, tags: TagNames
) -> str:
    """Add tags to a highlight, keeping its other tags. New tag names are created."""
    async with backend.call(ctx, f"Highlight {highlight_id}") as client:
        result = await client.add_highlight_tags(highlight_id, tags)
    return render.tag_list(result, f"Highlight {highlight_id}")


@tool(writing("Untag a highlight", destructive=True, idempotent=True))
async def remove_highlight_tags(
    backend: Backend, ctx: Context, highlight_id: Id, tags: TagsToRemove
) -> str:
    """Remove tags from a highlight (the tags themselves remain for other items)."""
    async with backend.call(ctx, f"Highlight {highlight_id}") as client:
        result = await client.remove_highlight_tags(highlight_id, tags)
    return render.tag_list(result, f"Highlight {highlight_id}")
