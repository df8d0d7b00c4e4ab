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
