"""Rows to wire dictionaries, batched so a page of N items costs a constant number of queries."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from screvi_mcp.local.storage.store import tags
from screvi_mcp.local.storage.store.pages import chunked

# Highlights joined with their source, the shape every highlight query selects.
HIGHLIGHT_SELECT = (
    "SELECT h.*, s.name AS s_name, s.type AS s_type, s.author AS s_author, "
    "s.image_url AS s_image_url, s.url AS s_url "
    "FROM highlights h LEFT JOIN sources s ON s.id = h.source_id"
)

# Sources with their article row (if any) and live highlight count.
SOURCE_SELECT = (
    "SELECT s.*, a.source_id AS article_id, a.title AS a_title, a.url AS a_url, "
    " (SELECT count(*) FROM highlights h WHERE h.source_id = s.id AND h.deleted_at IS NULL)"
    " AS highlight_count "
    "FROM sources s LEFT JOIN articles a ON a.source_id = s.id"
)

ARTICLE_SELECT = (
    "SELECT s.id, s.name, s.type, s.author, s.image_url, s.note, s.created_at, s.updated_at, "
    "s.deleted_at, a.*, "
    " (SELECT count(*) FROM highlights h WHERE h.source_id = s.id AND h.deleted_at IS NULL)"
    " AS highlight_count "
    "FROM articles a JOIN sources s ON s.id = a.source_id"
)


def _number(value: float | None) -> float | int | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value


def _json_object(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def _add_optional_fields(item: dict[str, Any], row: sqlite3.Row, include_metadata: bool) -> None:
    """`metadata` only when asked for; `deleted` only on tombstones (spec, section 2)."""
    if include_metadata:
        item["metadata"] = _json_object(row["metadata"])
    if row["deleted_at"] is not None:
        item["deleted"] = True


def highlights(
    conn: sqlite3.Connection, rows: list[sqlite3.Row], *, include_metadata: bool = False
) -> list[dict[str, Any]]:
    tag_map = tags.tags_of_highlights(conn, [row["id"] for row in rows])
    rendered = []
    for row in rows:
        item: dict[str, Any] = {
            "id": row["id"],
            "content": row["content"],
            "note": row["note"],
            "favorite": bool(row["favorite"]),
            "url": row["url"],
            "location": _number(row["location"]),
            "date": row["date"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "tags": tag_map[row["id"]],
            "source": None,
        }
        if row["source_id"] is not None:
            item["source"] = {
                "id": row["source_id"],
                "name": row["s_name"],
                "type": row["s_type"],
                "author": row["s_author"],
                "image_url": row["s_image_url"],
                "url": row["s_url"],
            }
        _add_optional_fields(item, row, include_metadata)
        rendered.append(item)
    return rendered


def highlights_by_seq(
    conn: sqlite3.Connection, seqs: list[int], *, include_metadata: bool = False
) -> dict[int, dict[str, Any]]:
    """Rendered highlights keyed by `seq` (search ranks by seq); missing seqs are left out."""
    rows: list[sqlite3.Row] = []
    for part in chunked(seqs):
        marks = ",".join("?" * len(part))
        rows.extend(conn.execute(f"{HIGHLIGHT_SELECT} WHERE h.seq IN ({marks})", part))
    rendered = highlights(conn, rows, include_metadata=include_metadata)
    return {row["seq"]: item for row, item in zip(rows, rendered, strict=True)}


def sources(
    conn: sqlite3.Connection, rows: list[sqlite3.Row], *, include_metadata: bool = False
) -> list[dict[str, Any]]:
    article_ids = [row["id"] for row in rows if row["article_id"] is not None]
    tag_map = tags.tags_of_sources(conn, article_ids)
    rendered = []
    for row in rows:
        item: dict[str, Any] = {
            "id": row["id"],
            "name": row["name"],
            "type": row["type"],
            "author": row["author"],
            "image_url": row["image_url"],
            "url": row["url"],
            "origin": row["origin"],
            "note": row["note"],
            # Only articles can carry tags; books and other imports always show an empty list.
            "tags": tag_map.get(row["id"], []),
            "highlight_count": row["highlight_count"],
            "created_at": row["created_at"],
        }
        _add_optional_fields(item, row, include_metadata)
        rendered.append(item)
    return rendered


def article_link(root_url: str, article_id: str) -> str:
    return f"{root_url.rstrip('/')}/app/articles/{article_id}"


def articles(
    conn: sqlite3.Connection, rows: list[sqlite3.Row], *, root_url: str
) -> list[dict[str, Any]]:
    tag_map = tags.tags_of_sources(conn, [row["id"] for row in rows])
    rendered = []
    for row in rows:
        rendered.append(
            {
                "id": row["id"],
                "title": row["title"],
                "author": row["author"],
                "url": row["url"],
                "canonical_url": row["canonical_url"],
                "excerpt": row["excerpt"],
                "status": row["status"],
                "home_status": row["home_status"],
                "favorite": bool(row["favorite"]),
                "progress_percentage": row["progress_percentage"],
                "reading_time_minutes": row["reading_time_minutes"],
                "word_count": row["word_count"],
                "source_domain": row["source_domain"],
                "site_name": row["site_name"],
                "language": row["language"],
                "saved_at": row["saved_at"],
                "published_date": row["published_date"],
                "updated_at": row["updated_at"],
                "parse_state": row["parse_state"],
                "note": row["note"],
                "deleted": row["deleted_at"] is not None,
                "image_url": row["image_url"],
                "screvi_url": article_link(root_url, row["id"]),
                "highlight_count": row["highlight_count"],
                "tags": tag_map[row["id"]],
            }
        )
    return rendered


def json_or_none(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    value = json.loads(text)
    return value if isinstance(value, dict) else None
