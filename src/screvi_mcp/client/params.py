"""Request building: query-string encoding, the spec's bounds, and partial-update bodies.

Bounds are checked before sending so an agent learns about `per_page=500` without spending a
request of its rate budget; the errors raised are the ones the server would have answered with
(400 `invalid_parameter` for the query string, 422 `validation_failed` for a body).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from enum import Enum
from typing import Any, Final, get_args
from urllib.parse import quote

from screvi_mcp import contract
from screvi_mcp.client.errors import InvalidParameterError, NotFoundError, ValidationFailedError
from screvi_mcp.contract import MAX_PER_PAGE, MAX_TAG_NAME


class Unset:
    """Type of `UNSET`: "leave this field as it is", as opposed to `None`, "clear it"."""

    _instance: Unset | None = None

    def __new__(cls) -> Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Final = Unset()

# The spec's enums as sets, for checking a value before it is sent (contract.py defines them).
SOURCE_TYPES: Final = frozenset(contract.SOURCE_TYPES)
CREATABLE_SOURCE_TYPES: Final = frozenset(contract.CREATABLE_SOURCE_TYPES)
SOURCE_LIST_TYPES: Final = frozenset[str](get_args(contract.SourceListType))
ARTICLE_STATUSES: Final = frozenset(contract.ARTICLE_STATUSES)
HOME_STATUSES: Final = frozenset(contract.HOME_STATUSES)
ARTICLE_SORT_KEYS: Final = frozenset[str](get_args(contract.ArticleSortKey))
SORT_ORDERS: Final = frozenset[str](get_args(contract.SortOrder))
CONTENT_FORMATS: Final = frozenset(contract.CONTENT_FORMATS)


def timestamp(value: datetime | date | str) -> str:
    """ISO 8601 in UTC with a `Z`; naive datetimes are taken as UTC, as the API's are."""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return value.isoformat()


def wire_value(value: Any) -> Any:
    """A Python value as it goes into a JSON body."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime | date):
        return timestamp(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def query(**values: Any) -> dict[str, str]:
    """Query-string parameters; `None` means "not sent", so the server's default applies."""
    out: dict[str, str] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, Enum):
            out[name] = str(value.value)
        elif isinstance(value, datetime | date):
            out[name] = timestamp(value)
        elif isinstance(value, list | tuple | set | frozenset):
            out[name] = ",".join(str(wire_value(item)) for item in value)
        else:
            out[name] = str(value)
    return out


def body(**values: Any) -> dict[str, Any]:
    """A JSON body from keyword values: `UNSET` fields are left out, `None` is sent as null."""
    return {name: wire_value(value) for name, value in values.items() if value is not UNSET}


def keywords(method: str, given: Mapping[str, Any], declared: type) -> dict[str, Any]:
    """Keyword filters checked against the TypedDict that declares them, in its order: a
    misspelt name is the `TypeError` a named parameter would have raised."""
    names: Mapping[str, Any] = declared.__annotations__
    for name in given:
        if name not in names:
            raise TypeError(f"{method}() got an unexpected keyword argument {name!r}")
    return {name: given[name] for name in names if name in given}


def path_id(value: str, what: str) -> str:
    """An id made safe as one path segment. A blank id, `.`/`..`, or one holding a slash
    (servers decode %2F back into one) would reach another endpoint, or none: no id has
    them, so it is the spec's 404 for a malformed id, answered without a request."""
    if not isinstance(value, str) or not value.strip():
        raise NotFoundError(f"{what} id is empty", status=404, from_server=False)
    value = value.strip()
    if value in (".", "..") or "/" in value:
        raise NotFoundError(f"{what} id {value!r} is not an id", status=404, from_server=False)
    return quote(value, safe="")


def check_range(
    name: str, value: float | None, *, low: float | None = None, high: float | None = None
) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or (low is not None and value < low)
        or (high is not None and value > high)
    ):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidParameterError(
            f"{name} must be {bounds}",
            status=400,
            fields={name: f"must be {bounds}"},
            from_server=False,
        )


def check_page(page: int, per_page: int, max_per_page: int = MAX_PER_PAGE) -> None:
    check_range("page", page, low=1)
    check_range("per_page", per_page, low=1, high=max_per_page)


def check_choice(
    name: str, value: str | None, choices: frozenset[str], *, body: bool = False
) -> None:
    if value is None or (isinstance(value, str) and value in choices):
        return
    reason = "must be one of " + ", ".join(sorted(choices))
    cls = ValidationFailedError if body else InvalidParameterError
    raise cls(
        f"{name} {reason}", status=422 if body else 400, fields={name: reason}, from_server=False
    )


def check_length(fields: Mapping[str, tuple[Any, int]]) -> None:
    """Body strings against their maximum lengths; all problems reported at once."""
    problems = {
        name: f"at most {limit} characters"
        for name, (value, limit) in fields.items()
        if isinstance(value, str) and len(value) > limit
    }
    if problems:
        raise ValidationFailedError(
            "Validation failed", status=422, fields=problems, from_server=False
        )


def check_tags(tags: Sequence[str] | Unset | None, field: str = "tags") -> list[str] | None:
    """Tag names or ids as a list; names are capped at 100 characters by the spec."""
    if tags is None or isinstance(tags, Unset):
        return None
    if isinstance(tags, str):
        # A bare string would otherwise be sent as one tag per character.
        tags = [tags]
    items = list(tags)
    problems = {
        f"{field}[{index}]": (
            "must be a non-empty string"
            if not isinstance(tag, str) or not tag.strip()
            else f"at most {MAX_TAG_NAME} characters"
        )
        for index, tag in enumerate(items)
        if not isinstance(tag, str) or not tag.strip() or len(tag) > MAX_TAG_NAME
    }
    if problems:
        raise ValidationFailedError(
            "Validation failed", status=422, fields=problems, from_server=False
        )
    return items


def check_tag_name(name: str) -> None:
    """One tag name, its problem reported under `name` (not `name[0]`: it is no list)."""
    try:
        check_tags([name], field="name")
    except ValidationFailedError as error:
        raise ValidationFailedError(
            "Validation failed",
            status=422,
            fields={"name": error.fields["name[0]"]},
            from_server=False,
        ) from None


def check_types(types: str | Sequence[str] | None) -> list[str] | None:
    """The comma-separated `types` filter of search and random."""
    if types is None:
        return None
    items = [t.strip() for t in types.split(",")] if isinstance(types, str) else list(types)
    unknown = [t for t in items if t not in SOURCE_TYPES]
    if unknown:
        reason = "unknown source type(s): " + ", ".join(unknown)
        raise InvalidParameterError(reason, status=400, fields={"types": reason}, from_server=False)
    return items
