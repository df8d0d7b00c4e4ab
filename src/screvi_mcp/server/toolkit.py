"""What every tool module shares: the tool record, annotations, and argument types."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from mcp.types import ToolAnnotations
from pydantic import BeforeValidator, Field

from screvi_mcp import contract
from screvi_mcp.server.render import ResponseFormat
from screvi_mcp.server.toolsets import TOOLSETS as TOOLSETS  # the tool modules' names
from screvi_mcp.server.toolsets import Toolset as Toolset

if TYPE_CHECKING:
    from screvi_mcp.server.backend import Backend


ToolFn = Callable[..., Awaitable[str]]

# The most `tools/list` may cost an agent's context, all tools listed, in cl100k_base tokens
# (tests/server/test_token_budget.py holds it; bench/tokens.py reports against it).
TOOLS_LIST_TOKEN_BUDGET = 6000


@dataclass(frozen=True)
class ToolSpec:
    """One tool, declared once: its function, its toolset and its annotations.

    The function's first parameter is the `Backend`, bound when a server is built; the rest
    is the tool's own signature, the one agents see. Name, title, description and whether it
    writes all come from the function and the annotations, so none can disagree.
    """

    fn: ToolFn
    toolset: Toolset
    annotations: ToolAnnotations

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def title(self) -> str:
        return self.annotations.title or self.name

    @property
    def write(self) -> bool:
        return not self.annotations.read_only_hint

    @property
    def description(self) -> str:
        return inspect.cleandoc(self.fn.__doc__ or "")

    def bind(self, backend: Backend) -> ToolFn:
        """The tool as the SDK takes it: `backend` filled in and gone from the signature."""
        fn = self.fn

        @functools.wraps(fn)
        async def bound(*args: Any, **kwargs: Any) -> str:
            return await fn(backend, *args, **kwargs)

        # Resolved here, in the tool module's namespace: the SDK reads the signature of
        # `bound`, whose own module does not define the tool's argument types.
        signature = inspect.signature(fn, eval_str=True)
        parameters = list(signature.parameters.values())[1:]
        bound.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        hints = typing.get_type_hints(fn, include_extras=True)
        bound.__annotations__ = {k: v for k, v in hints.items() if k != "backend"}
        return bound


def declare(
    registry: list[ToolSpec], toolset: Toolset
) -> Callable[[ToolAnnotations], Callable[[ToolFn], ToolFn]]:
    """`@tool(annotations)` for one toolset's module: records the function in `registry`."""

    def tool(annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
        def record(fn: ToolFn) -> ToolFn:
            registry.append(ToolSpec(fn, toolset, annotations))
            return fn

        return record

    return tool


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


# Quotes an id is often pasted with: from JSON ("…"), Python ('…') or markdown (`…`).
_ID_QUOTES = ('"', "'", "`")


def clean_id(value: Any) -> Any:
    """An id as an agent pastes it, as the id: surrounding whitespace and one pair of
    matching quotes or backticks dropped. Anything else is left for validation to judge."""
    if not isinstance(value, str):
        return value
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in _ID_QUOTES:
        value = value[1:-1].strip()
    return value


# Argument types, with the spec's bounds, shared by several tools.
# The bounds before the cleaning validator, which then wraps them: a blank or long id is
# named in characters ("at most 64 characters"), not as a list's "items".
Id = Annotated[
    str,
    Field(description="UUID, as returned by another tool", min_length=1, max_length=64),
    BeforeValidator(clean_id),
]
Page = Annotated[int, Field(ge=1, description="1-based page number")]
PerPage = Annotated[int, Field(ge=1, le=contract.MAX_PER_PAGE)]
SearchPerPage = Annotated[int, Field(ge=1, le=contract.MAX_SEARCH_PER_PAGE)]
RandomCount = Annotated[int, Field(ge=1, le=contract.MAX_RANDOM_COUNT)]
Query = Annotated[str, Field(min_length=1, max_length=contract.MAX_QUERY_CHARS)]
MaxChars = Annotated[int, Field(ge=contract.MIN_MAX_CHARS)]
Format = Annotated[
    ResponseFormat,
    Field(description="concise (default) or detailed (adds dates, urls, scores, metadata)"),
]
TagName = Annotated[str, Field(min_length=1, max_length=contract.MAX_TAG_NAME)]
# Not the spec's: how many tags one call may add or remove.
MAX_TAGS_PER_CALL = 100
TagNames = Annotated[
    list[TagName],
    Field(
        min_length=1,
        max_length=MAX_TAGS_PER_CALL,
        description="tag names (case-insensitive; new names are created) or tag ids",
    ),
]
TagsToRemove = Annotated[
    list[TagName],
    Field(
        min_length=1,
        max_length=MAX_TAGS_PER_CALL,
        description="tag names (case-insensitive) or tag ids",
    ),
]
SourceTypeName = contract.SourceTypeName
DateTimeText = Annotated[
    str, Field(description="ISO 8601 date-time, e.g. 2025-01-31T00:00:00Z", max_length=40)
]
