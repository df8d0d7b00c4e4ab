"""What the library accepts as input: pydantic models with the spec's bounds, and the
per-field reasons they refuse with (`Invalid`, which the API answers 422 with its `fields`).

The API validates request bodies with them and the store takes them as its input (an
import validates with them too), so they live here, below both.

Models are strict (a string is not a boolean, `3.5` is not an integer) because an agent that
sends the wrong type should learn so, not have its value silently coerced. Unknown fields are
ignored, as most JSON APIs do. Presence matters for PATCH: `model_fields_set` tells a field
sent as `null` (clear it) from a field left out (keep it).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from screvi_mcp import contract
from screvi_mcp.contract import CREATABLE_SOURCE_TYPES, MAX_HIGHLIGHT_TEXT, MAX_TAG_NAME
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.ids import is_uuid
from screvi_mcp.local.storage.store.refusals import Invalid

MAX_URL_LENGTH = 2048
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*$")
_HEX_COLOUR = re.compile(r"^#?(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$")


def _uri(value: str) -> str:
    value = value.strip()
    if len(value) > MAX_URL_LENGTH:
        raise ValueError(f"must be at most {MAX_URL_LENGTH} characters")
    parts = urlsplit(value)
    _ = parts.port  # ValueError (so a 422) on a port that is not a number in 0-65535
    if not parts.scheme or not _SCHEME.match(parts.scheme):
        raise ValueError("must be an absolute URI such as https://example.com/page")
    if parts.scheme.lower() in ("http", "https") and not parts.hostname:
        raise ValueError("must name a host")
    return value


def _web_url(value: str) -> str:
    value = _uri(value)
    if urlsplit(value).scheme.lower() not in ("http", "https"):
        raise ValueError("must be an http or https URL")
    return value


def _date_time(value: str) -> str:
    try:
        return clock.normalise_timestamp(value)
    except (ValueError, OverflowError):  # Overflow: year 1 or 9999 pushed out by an offset
        raise ValueError("must be an ISO 8601 date-time such as 2024-05-01T12:00:00Z") from None


def _date(value: str) -> str:
    try:
        return clock.parse_timestamp(value).date().isoformat()
    except (ValueError, OverflowError):
        raise ValueError("must be an ISO 8601 date such as 2024-05-01") from None


def _uuid(value: str) -> str:
    if not is_uuid(value):
        raise ValueError("must be a UUID")
    return value.lower()


# Characters that show nothing: a text made only of these has nothing to read.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
# What a tag name may not hold, as it is echoed raw into every listing: control characters
# (NUL, tab, newline...), line and paragraph separators, lone surrogates, and the bidi marks,
# overrides and isolates that reorder the text shown around them. Other format characters
# stay allowed: the zero-width joiner builds emoji such as 👩‍💻.
_UNSHOWABLE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def _has_visible(value: str) -> bool:
    return any(unicodedata.category(char) not in _INVISIBLE_CATEGORIES for char in value)


def _visible(value: str) -> str:
    if not _has_visible(value):
        raise ValueError("must contain visible text, not only whitespace or control characters")
    return value


def _tag_entry(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("tag names must not be empty")
    if len(value) > MAX_TAG_NAME:
        raise ValueError(f"tag names must be at most {MAX_TAG_NAME} characters")
    for position, char in enumerate(value, start=1):
        if char in _BIDI_CONTROLS or unicodedata.category(char) in _UNSHOWABLE_CATEGORIES:
            raise ValueError(
                f"tag names must not contain control characters, bidi controls or line "
                f"breaks (found U+{ord(char):04X} at character {position}); use letters, "
                "digits, spaces and punctuation"
            )
    if not _has_visible(value):
        raise ValueError("tag names must contain visible text")
    return value


def _colour(value: str) -> str:
    value = value.strip()
    if not _HEX_COLOUR.match(value):
        raise ValueError("must be a hex colour such as #ff8800")
    return value if value.startswith("#") else "#" + value


Uri = Annotated[str, AfterValidator(_uri)]
WebUrl = Annotated[str, AfterValidator(_web_url)]
DateTime = Annotated[str, AfterValidator(_date_time)]
Date = Annotated[str, AfterValidator(_date)]
Uuid = Annotated[str, AfterValidator(_uuid)]
TagEntry = Annotated[str, AfterValidator(_tag_entry)]
Colour = Annotated[str, AfterValidator(_colour)]
TagList = list[TagEntry]


class Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    def present(self) -> dict[str, Any]:
        """The fields the client actually sent, with their (validated) values."""
        return {name: getattr(self, name) for name in self.model_fields_set}


Content = Annotated[str, Field(max_length=MAX_HIGHLIGHT_TEXT), AfterValidator(_visible)]
# The spec bounds `location` below only; above, SQLite cannot store it (a 500) and JSON
# clients cannot read it exactly. 2**53 - 1 is the largest integer every client round-trips.
Location = Annotated[int, Field(ge=0, le=2**53 - 1)]


class HighlightCreate(Body):
    content: Content
    note: Annotated[str, Field(max_length=MAX_HIGHLIGHT_TEXT)] | None = None
    favorite: bool | None = None
    url: Uri | None = None
    location: Location | None = None
    date: DateTime | None = None
    source_id: Uuid | None = None
    article_id: Uuid | None = None
    tags: TagList | None = None
    metadata: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_parent(self) -> HighlightCreate:
        if self.source_id is not None and self.article_id is not None:
            raise PydanticCustomError("one_parent", "give source_id or article_id, not both")
        return self


class HighlightUpdate(Body):
    content: Content | None = None
    note: Annotated[str, Field(max_length=MAX_HIGHLIGHT_TEXT)] | None = None
    favorite: bool | None = None
    url: Uri | None = None
    location: Location | None = None
    date: DateTime | None = None
    metadata: dict[str, Any] | None = None
    tags: TagList | None = None

    # Fields whose `null` would not mean "clear": refuse it rather than guess. `tags: null`
    # is allowed: the spec's "send null to clear a field" covers tags, cleared to none.
    not_nullable: ClassVar[tuple[str, ...]] = ("content", "favorite")


class TagsBody(Body):
    tags: TagList


SourceName = Annotated[str, Field(max_length=contract.MAX_SOURCE_NAME), AfterValidator(_visible)]


class SourceCreate(Body):
    name: SourceName
    type: contract.CreatableSourceType
    author: Annotated[str, Field(max_length=contract.MAX_AUTHOR)] | None = None
    url: Uri | None = None
    image_url: Uri | None = None
    isbn: Annotated[str, Field(max_length=contract.MAX_BOOK_CODE)] | None = None
    asin: Annotated[str, Field(max_length=contract.MAX_BOOK_CODE)] | None = None
    note: Annotated[str, Field(max_length=contract.MAX_NOTE)] | None = None
    published_date: Date | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _explain_type(cls, value: object) -> object:
        if value == "article":
            raise ValueError("articles are saved with POST /articles, not created as sources")
        if isinstance(value, str) and value not in CREATABLE_SOURCE_TYPES:
            raise ValueError("must be one of " + ", ".join(CREATABLE_SOURCE_TYPES))
        return value


class SourceUpdate(Body):
    name: (
        Annotated[str, Field(max_length=contract.MAX_SOURCE_NAME), AfterValidator(_visible)] | None
    ) = None
    author: Annotated[str, Field(max_length=contract.MAX_AUTHOR)] | None = None
    url: Uri | None = None
    image_url: Uri | None = None
    origin: Annotated[str, Field(max_length=500)] | None = None
    isbn: Annotated[str, Field(max_length=contract.MAX_BOOK_CODE)] | None = None
    asin: Annotated[str, Field(max_length=contract.MAX_BOOK_CODE)] | None = None
    note: Annotated[str, Field(max_length=contract.MAX_NOTE)] | None = None
    published_date: Date | None = None
    metadata: dict[str, Any] | None = None
    type: str | None = None

    not_nullable: ClassVar[tuple[str, ...]] = ("name",)


class ArticleCreate(Body):
    url: WebUrl
    tags: TagList | None = None


class ArticleUpdate(Body):
    home_status: contract.HomeStatusName | None = None
    favorite: bool | None = None
    title: Annotated[str, Field(max_length=contract.MAX_ARTICLE_TITLE)] | None = None
    excerpt: Annotated[str, Field(max_length=contract.MAX_EXCERPT)] | None = None
    note: Annotated[str, Field(max_length=contract.MAX_NOTE)] | None = None
    tags: TagList | None = None

    not_nullable: ClassVar[tuple[str, ...]] = ("home_status", "favorite", "tags")


class TagCreate(Body):
    name: Annotated[str, Field(max_length=MAX_TAG_NAME), AfterValidator(_tag_entry)]
    color: Colour | None = None


class TagUpdate(Body):
    name: Annotated[str, Field(max_length=MAX_TAG_NAME), AfterValidator(_tag_entry)] | None = None
    color: Colour | None = None

    not_nullable: ClassVar[tuple[str, ...]] = ("name",)


ModelT = TypeVar("ModelT", bound="Body")


def field_errors(error: ValidationError, prefix: str = "") -> dict[str, str]:
    """Pydantic's errors as the spec's `fields` map: `tags[2]`, `highlights[3].content`."""
    fields: dict[str, str] = {}
    for item in error.errors():
        path = prefix
        for part in item["loc"]:
            if isinstance(part, int):
                path += f"[{part}]"
            elif part in ("function-after", "str", "int", "bool", "list", "dict"):
                continue  # pydantic's union-branch markers: noise to an API user
            else:
                path = f"{path}.{part}" if path else str(part)
        message = str(item["msg"])
        if item["type"] == "one_parent":  # a model-level rule: name the field it is about
            path = f"{path}.article_id" if path else "article_id"
        if item["type"] == "missing":
            message = "is required"
        elif message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        fields.setdefault(path or "body", message)
    return fields


def parse_body(model: type[ModelT], payload: Any, prefix: str = "") -> ModelT:
    """Validate a decoded JSON body; raises `Invalid` with per-field reasons (the API's 422
    validation_failed)."""
    if not isinstance(payload, dict):
        raise Invalid({prefix or "body": "must be a JSON object"})
    try:
        body = model.model_validate(payload)
    except ValidationError as error:
        raise Invalid(field_errors(error, prefix)) from None
    nulls = {
        name: "cannot be null"
        for name in getattr(model, "not_nullable", ())
        if name in body.model_fields_set and getattr(body, name) is None
    }
    if nulls:
        raise Invalid({f"{prefix}.{k}" if prefix else k: v for k, v in nulls.items()})
    return body
