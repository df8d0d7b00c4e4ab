"""What every tool module shares: the tool record, annotations, and argument types."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.types import ToolAnnotations
from pydantic import Field

from screvi_mcp import contract
from screvi_mcp.server.render import ResponseFormat

Toolset = Literal["highlights", "search", "sources", "articles", "tags"]
TOOLSETS: tuple[Toolset, ...] = ("highlights", "search", "sources", "articles", "tags")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[..., Any]
    toolset: Toolset
    write: bool
    annotations: ToolAnnotations
    title: str


def reading(title: str) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    )


def writing(
    title: str, *, destructive: bool, idempotent: bool, open_world: bool = False
) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


NOTHING_TO_CHANGE = "Nothing to change: give at least one field, or list fields in `clear`."


def changed_fields(given: dict[str, Any], clear: Sequence[str]) -> dict[str, Any]:
    """An update tool's arguments as the client's partial-update keywords.

    Fields given (not None) are sent; fields named in `clear` are sent as null, which clears
    them; every other field is left out, and the client's UNSET default leaves it alone.
    """
    changes = {name: value for name, value in given.items() if value is not None}
    changes.update(dict.fromkeys(clear))
    return changes


# Argument types, with the spec's bounds, shared by several tools.
Id = Annotated[
    str, Field(description="UUID, as returned by another tool", min_length=1, max_length=64)
]
Page = Annotated[int, Field(ge=1, description="1-based page number")]
Format = Annotated[
    ResponseFormat,
    Field(description="concise (default) or detailed (adds dates, urls, scores, metadata)"),
]
_TagName = Annotated[str, Field(min_length=1, max_length=100)]
TagNames = Annotated[
    list[_TagName],
    Field(
        min_length=1,
        max_length=100,
        description="tag names (case-insensitive; new names are created) or tag ids",
    ),
]
TagsToRemove = Annotated[
    list[_TagName],
    Field(min_length=1, max_length=100, description="tag names (case-insensitive) or tag ids"),
]
SourceTypeName = contract.SourceTypeName
DateTimeText = Annotated[
    str, Field(description="ISO 8601 date-time, e.g. 2025-01-31T00:00:00Z", max_length=40)
]
