"""Ids as the library writes them: UUIDs (checked before a lookup, so a malformed id is
"not found" rather than a query for something that cannot exist)."""

from __future__ import annotations

import uuid


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return False
    return True


# What an agent is told when an id it sent cannot be one (an example, not a real id).
ID_FORM = "ids are UUIDs such as 3fa85f64-5717-4562-b3fc-2c963f66afa6"


def missing(kind: str, ident: str) -> str:
    """The message for an id that names nothing; a malformed one is told what ids look like."""
    if is_uuid(ident):
        return f"{kind} {ident} not found"
    return f"{kind} id {ident!r} is not an id: {ID_FORM}"
