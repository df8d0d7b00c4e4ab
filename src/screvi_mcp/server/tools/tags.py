"""Tags toolset: list with counts, create, rename or recolour, delete."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from screvi_mcp.client import UNSET
from screvi_mcp.server import render
from screvi_mcp.server.backend import Backend
from screvi_mcp.server.toolkit import Id, TagName, ToolSpec, declare, reading, writing

Colour = Annotated[str, Field(pattern=r"^#?[0-9A-Fa-f]{3,8}$", description="hex colour, #ff8800")]

TOOLS: list[ToolSpec] = []
tool = declare(TOOLS, "tags")


@tool(reading("List tags"))
async def list_tags(backend: Backend, ctx: Context) -> str:
    """List all tags with how many highlights and articles carry each."""
    async with backend.call(ctx) as client:
        items = await client.list_tags()
    return render.tags_with_counts(items)


@tool(writing("Create a tag", destructive=False, idempotent=True))
async def create_tag(
    backend: Backend, ctx: Context, name: TagName, color: Colour | None = None
) -> str:
    """Create a tag. If one exists with that name in any case, it is returned instead.
    (Tagging an item with a new name also creates the tag.)"""
    async with backend.call(ctx) as client:
        tag = await client.create_tag(name, color=color)
    verb = "Created" if tag.created else "Already exists:"
    return f"{verb} tag {tag.name} (id {tag.id})"


@tool(writing("Update a tag", destructive=True, idempotent=True))
async def update_tag(
    backend: Backend,
    ctx: Context,
    tag_id: Id,
    name: Annotated[TagName | None, Field(description="new name, kept on every item")] = None,
    color: Colour | None = None,
    clear_color: bool = False,
) -> str:
    """Rename or recolour a tag; everything carrying it keeps it."""
    if name is None and color is None and not clear_color:
        return "Nothing to change: give name, color or clear_color=true."
    async with backend.call(ctx, f"Tag {tag_id}") as client:
        tag = await client.update_tag(
            tag_id,
            name=UNSET if name is None else name,
            color=None if clear_color else (UNSET if color is None else color),
        )
    return f"Updated tag {tag.name} (id {tag.id}{', colour ' + tag.color if tag.color else ''})"


@tool(writing("Delete a tag", destructive=True, idempotent=True))
async def delete_tag(backend: Backend, ctx: Context, tag_id: Id) -> str:
    """Delete a tag permanently, removing it from every highlight and article (they stay)."""
    async with backend.call(ctx, f"Tag {tag_id}") as client:
        result = await client.delete_tag(tag_id)
    count = result.get("removed_from")
    detail = f"; it was removed from {count} items" if isinstance(count, int) else ""
    return f"Deleted tag {tag_id}{detail}."
