"""Sources: books, podcasts, videos, tweets, personal notes, collections — and articles, which
share their id space (an article is a source with an `articles` row)."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from screvi_mcp.contract import DEFAULT_SOURCE_HIGHLIGHTS_PER_PAGE, expand_types
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.ids import is_uuid
from screvi_mcp.local.storage.inputs import SourceCreate
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import wire
from screvi_mcp.local.storage.store.pages import like_pattern, offset, pagination
from screvi_mcp.local.storage.store.refusals import Conflict, Invalid, NotFound


@dataclass(frozen=True)
class SourceFilters:
    type: str | None = None
    search: str | None = None
    updated_since: str | None = None
    include_deleted: bool = False
    include_empty: bool = False


def list_page(
    conn: sqlite3.Connection,
    filters: SourceFilters,
    page: int,
    per_page: int,
    *,
    include_metadata: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if not filters.include_deleted:
        clauses.append("s.deleted_at IS NULL")
    if filters.type is not None:
        kinds = expand_types([filters.type])
        clauses.append(f"s.type IN ({','.join('?' * len(kinds))})")
        args.extend(kinds)
    if filters.search is not None:
        clauses.append("(s.name LIKE ? ESCAPE '\\' OR s.author LIKE ? ESCAPE '\\')")
        args.extend([like_pattern(filters.search)] * 2)
    if filters.updated_since is not None:
        clauses.append("s.updated_at > ?")
        args.append(filters.updated_since)
    if not filters.include_empty:
        # Saved articles without highlights are reading-list items, not highlight sources.
        clauses.append(
            "(a.source_id IS NULL OR EXISTS (SELECT 1 FROM highlights h "
            "WHERE h.source_id = s.id AND h.deleted_at IS NULL))"
        )
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    total = conn.execute(
        f"SELECT count(*) FROM sources s LEFT JOIN articles a ON a.source_id = s.id{where}", args
    ).fetchone()[0]
    rows = conn.execute(
        f"{wire.SOURCE_SELECT}{where} ORDER BY s.created_at DESC, s.id LIMIT ? OFFSET ?",
        [*args, per_page, offset(page, per_page)],
    ).fetchall()
    return (
        wire.sources(conn, rows, include_metadata=include_metadata),
        pagination(total, page, per_page),
    )


def _live_row(conn: sqlite3.Connection, source_id: str) -> sqlite3.Row:
    if not is_uuid(source_id):
        raise NotFound("Source", source_id)
    row = conn.execute(
        f"{wire.SOURCE_SELECT} WHERE s.id = ? AND s.deleted_at IS NULL", (source_id.lower(),)
    ).fetchone()
    if row is None:
        raise NotFound("Source", source_id)
    return row


def get(
    conn: sqlite3.Connection,
    source_id: str,
    page: int = 1,
    per_page: int = DEFAULT_SOURCE_HIGHLIGHTS_PER_PAGE,
    *,
    include_metadata: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A source with one page of its live highlights, and that page's pagination."""
    row = _live_row(conn, source_id)
    source = wire.sources(conn, [row], include_metadata=include_metadata)[0]
    total = row["highlight_count"]
    rows = conn.execute(
        f"{wire.HIGHLIGHT_SELECT} WHERE h.source_id = ? AND h.deleted_at IS NULL "
        "ORDER BY coalesce(h.location, 1e18), h.created_at, h.seq LIMIT ? OFFSET ?",
        (row["id"], per_page, offset(page, per_page)),
    ).fetchall()
    source["highlights"] = wire.highlights(conn, rows, include_metadata=include_metadata)
    return source, pagination(total, page, per_page)


def known_ids(library: Library, source_ids: Iterable[str]) -> set[str]:
    """Which of `source_ids` are sources this library holds or held (a deleted source keeps
    its row), articles included."""
    rows = library.connection().execute(
        "SELECT id FROM sources WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(source_ids))),),
    )
    return {str(row["id"]) for row in rows}


def create(library: Library, body: SourceCreate) -> dict[str, Any]:
    with library.write() as conn:
        source_id = insert(conn, body)
    conn = library.connection()
    return wire.sources(conn, [_live_row(conn, source_id)])[0]


def insert(conn: sqlite3.Connection, body: SourceCreate) -> str:
    """Insert a validated source inside the caller's transaction; returns its id.

    Shared by POST /sources and imports (local/storage/store/imports.py), so both keep the same
    rules.
    """
    if body.type == "self":
        existing = conn.execute(
            "SELECT id FROM sources WHERE type = 'self' AND deleted_at IS NULL"
        ).fetchone()
        if existing is not None:
            raise Conflict(
                "You already have a personal-notes source; add highlights to it instead",
                source_id=existing["id"],
            )
    source_id = str(uuid.uuid4())
    now = clock.now()
    conn.execute(
        "INSERT INTO sources(id, name, type, author, image_url, url, note, isbn, asin, "
        "published_date, metadata, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            source_id,
            body.name.strip(),
            body.type,
            body.author,
            body.image_url,
            body.url,
            body.note,
            body.isbn,
            body.asin,
            body.published_date,
            json.dumps(body.metadata or {}),
            now,
            now,
        ),
    )
    return source_id


_EDITABLE = (
    "name",
    "author",
    "url",
    "image_url",
    "origin",
    "isbn",
    "asin",
    "note",
    "published_date",
)


def update(library: Library, source_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    with library.write() as conn:
        row = _live_row(conn, source_id)
        if "type" in changes and changes["type"] != row["type"]:
            raise Invalid({"type": "a source's type cannot be changed"})
        if row["article_id"] is not None and "name" in changes:
            # An article's name is its title: keep the two in step.
            conn.execute(
                "UPDATE articles SET title = ? WHERE source_id = ?", (changes["name"], row["id"])
            )
        columns = {name: changes[name] for name in _EDITABLE if name in changes}
        if "metadata" in changes:
            columns["metadata"] = json.dumps(changes["metadata"] or {})
        columns["updated_at"] = clock.now()
        assignments = ", ".join(f"{name} = ?" for name in columns)
        conn.execute(
            f"UPDATE sources SET {assignments} WHERE id = ?", [*columns.values(), row["id"]]
        )
        seqs = [
            r[0]
            for r in conn.execute(
                "SELECT seq FROM highlights WHERE source_id = ? AND deleted_at IS NULL",
                (row["id"],),
            )
        ]
    if "name" in changes or "author" in changes:
        library.notify_changed(seqs)
    conn = library.connection()
    return wire.sources(conn, [_live_row(conn, row["id"])])[0]


def delete(library: Library, source_id: str, *, cascade: bool) -> dict[str, Any]:
    """Soft delete; refuses (409) while live highlights remain unless `cascade`."""
    if not is_uuid(source_id):
        raise NotFound("Source", source_id)
    removed: list[int] = []
    with library.write() as conn:
        row = conn.execute(
            "SELECT s.id, s.deleted_at, a.source_id AS article_id FROM sources s "
            "LEFT JOIN articles a ON a.source_id = s.id WHERE s.id = ?",
            (source_id.lower(),),
        ).fetchone()
        if row is None:
            raise NotFound("Source", source_id)
        if row["article_id"] is not None:
            # Spec: articles cannot be deleted through the API, only archived.
            raise Conflict(
                f"{row['id']} is a saved article, and articles cannot be deleted; archive it "
                "with PATCH /articles/{id} and home_status=archive"
            )
        if row["deleted_at"] is not None:
            return {"id": row["id"], "deleted": True, "highlights_deleted": 0}
        removed = [
            r[0]
            for r in conn.execute(
                "SELECT seq FROM highlights WHERE source_id = ? AND deleted_at IS NULL",
                (row["id"],),
            )
        ]
        if removed and not cascade:
            raise Conflict(
                f"Source {row['id']} still has {len(removed)} highlight(s); delete them first "
                "or pass cascade=true to delete them with it",
            )
        now = clock.now()
        conn.execute(
            "UPDATE highlights SET deleted_at = ?, updated_at = ? "
            "WHERE source_id = ? AND deleted_at IS NULL",
            (now, now, row["id"]),
        )
        conn.execute(
            "UPDATE sources SET deleted_at = ?, updated_at = ? WHERE id = ?",
            (now, now, row["id"]),
        )
    library.notify_removed(removed)
    return {"id": row["id"], "deleted": True, "highlights_deleted": len(removed)}
