"""Request bodies: decoding one (`require_json_object`), and the validated input models.

The models and `parse_body` live in `local/storage/inputs.py`, below the API, because the
store takes them as its input; they are named here too, for the routes. `parse_body`
raises the store's `Invalid`, which the request pipeline answers 422 validation_failed.
"""

from __future__ import annotations

from typing import Any

from screvi_mcp.local.api.error_answers import ApiError, validation_failed
from screvi_mcp.local.storage.inputs import (
    ArticleCreate,
    ArticleUpdate,
    Body,
    HighlightCreate,
    HighlightUpdate,
    SourceCreate,
    SourceUpdate,
    TagCreate,
    TagsBody,
    TagUpdate,
    field_errors,
    parse_body,
)

__all__ = [
    "ArticleCreate",
    "ArticleUpdate",
    "Body",
    "HighlightCreate",
    "HighlightUpdate",
    "SourceCreate",
    "SourceUpdate",
    "TagCreate",
    "TagUpdate",
    "TagsBody",
    "field_errors",
    "parse_body",
    "require_json_object",
]


def require_json_object(raw: bytes) -> Any:
    """Decode a request body; an unparseable one is a 422 naming `body`."""
    import json

    if not raw.strip():
        raise validation_failed({"body": "a JSON object is required"})

    def no_constants(name: str) -> Any:
        # NaN and Infinity are not JSON; stored in metadata they would make every later
        # response that renders it fail.
        raise ValueError(f"{name} is not valid JSON")

    try:
        return json.loads(raw, parse_constant=no_constants)
    except (ValueError, UnicodeDecodeError, RecursionError):  # Recursion: absurd nesting
        raise ApiError(
            422,
            "validation_failed",
            "Request body is not valid JSON",
            fields={"body": "must be valid JSON"},
        ) from None
