"""Pagination arithmetic shared by every list."""

from __future__ import annotations

from typing import Any


def pagination(total: int, page: int, per_page: int) -> dict[str, Any]:
    total_pages = (total + per_page - 1) // per_page
    return {
        "page": page,
        "per_page": per_page,
        "total": total,
        "total_pages": total_pages,
        "has_more": page < total_pages,
    }


# SQLite's OFFSET is a signed 64-bit integer: a larger one (page=10**20) is an error, not an
# empty page. Any offset this large is past every row anyway.
MAX_OFFSET = 2**62


def offset(page: int, per_page: int) -> int:
    return min((page - 1) * per_page, MAX_OFFSET)


def like_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def chunked(values: list[Any], size: int = 500) -> list[list[Any]]:
    """Split for IN (...) lists, below SQLite's bound-parameter limit."""
    return [values[i : i + size] for i in range(0, len(values), size)]
