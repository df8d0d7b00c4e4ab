"""Highlights: listing, random picks, creation (single and bulk), edits, soft deletion, tags."""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass, field
from typing import Any

from screvi_mcp.contract import expand_types
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.ids import is_uuid
from screvi_mcp.local.storage.inputs import HighlightCreate
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import tags, wire
from screvi_mcp.local.storage.store.pages import chunked, offset, pagination
from screvi_mcp.local.storage.store.refusals import Invalid, NotFound

# How a new highlight names its source: (source_id, article_id).
SourceKey = tuple[str | None, str | None]


@dataclass(frozen=True)
class HighlightFilters:
    source_id: str | None = None
    favorite: bool | None = None
    tag_id: str | None = None
    tag: str | None = None
    types: list[str] | None = None
    updated_since: str | None = None
    include_deleted: bool = False


def _where(filters: HighlightFilters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if not filters.include_deleted:
        clauses.append("h.deleted_at IS NULL")
    if filters.source_id is not None:
        clauses.append("h.source_id = ?")
        args.append(filters.source_id)
    if filters.favorite is not None:
        clauses.append("h.favorite = ?")
        args.append(int(filters.favorite))
    if filters.tag_id is not None:
        clauses.append("h.id IN (SELECT highlight_id FROM highlight_tags WHERE tag_id = ?)")
        args.append(filters.tag_id)
    if filters.tag is not None:
        clauses.append(
            "h.id IN (SELECT ht.highlight_id FROM highlight_tags ht JOIN tags t "
            "ON t.id = ht.tag_id WHERE t.name_key = ? OR t.id = ?)"
        )
        args.extend([filters.tag.strip().lower(), filters.tag.strip().lower()])
    if filters.types:
        kinds = expand_types(filters.types)
        clauses.append(f"s.type IN ({','.join('?' * len(kinds))})")
        args.extend(kinds)
    if filters.updated_since is not None:
        clauses.append("h.updated_at > ?")
        args.append(filters.updated_since)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def list_page(
    conn: sqlite3.Connection,
    filters: HighlightFilters,
    page: int,
    per_page: int,
    *,
    include_metadata: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    where, args = _where(filters)
    total = conn.execute(
        f"SELECT count(*) FROM highlights h LEFT JOIN sources s ON s.id = h.source_id{where}",
        args,
    ).fetchone()[0]
    rows = conn.execute(
        f"{wire.HIGHLIGHT_SELECT}{where} ORDER BY h.created_at DESC, h.seq DESC LIMIT ? OFFSET ?",
        [*args, per_page, offset(page, per_page)],
    ).fetchall()
    return (
        wire.highlights(conn, rows, include_metadata=include_metadata),
        pagination(total, page, per_page),
    )


def random_pick(
    conn: sqlite3.Connection, filters: HighlightFilters, count: int
) -> list[dict[str, Any]]:
    where, args = _where(filters)
    rows = conn.execute(
        f"{wire.HIGHLIGHT_SELECT}{where} ORDER BY random() LIMIT ?", [*args, count]
    ).fetchall()
    return wire.highlights(conn, rows)


def _live_row(conn: sqlite3.Connection, highlight_id: str) -> sqlite3.Row:
    if not is_uuid(highlight_id):
        raise NotFound("Highlight", highlight_id)
    row = conn.execute(
        f"{wire.HIGHLIGHT_SELECT} WHERE h.id = ? AND h.deleted_at IS NULL",
        (highlight_id.lower(),),
    ).fetchone()
    if row is None:
        raise NotFound("Highlight", highlight_id)
    return row


def get(conn: sqlite3.Connection, highlight_id: str, *, include_metadata: bool = False) -> Any:
    row = _live_row(conn, highlight_id)
    return wire.highlights(conn, [row], include_metadata=include_metadata)[0]


def _source_for(
    conn: sqlite3.Connection, item: HighlightCreate, prefix: str, known: dict[SourceKey, str]
) -> str:
    """The source a new highlight belongs to, checked (`known`: answers already found in
    this transaction, by (source_id, article_id), so a bulk create looks each source up once).

    A standalone highlight (neither id) is filed under the user's personal-notes source
    (type `self`: "user-created highlights"), made on first use: the spec's Highlight always
    has a `source`, and clients read `source.name`. A later POST /sources type=self then
    answers 409 with this source's id, as the spec says.
    """
    if item.source_id is not None and item.article_id is not None:
        raise Invalid({f"{prefix}article_id": "give source_id or article_id, not both"})
    key = (item.source_id, item.article_id)
    found = known.get(key)
    if found is None:
        found = _look_up_source(conn, item, prefix)
        known[key] = found
    return found


def _look_up_source(conn: sqlite3.Connection, item: HighlightCreate, prefix: str) -> str:
    if item.article_id is not None:
        row = conn.execute(
            "SELECT s.id FROM sources s JOIN articles a ON a.source_id = s.id "
            "WHERE s.id = ? AND s.deleted_at IS NULL",
            (item.article_id,),
        ).fetchone()
        if row is None:
            raise Invalid({f"{prefix}article_id": "no saved article has this id"})
        return str(row["id"])
    if item.source_id is not None:
        row = conn.execute(
            "SELECT id FROM sources WHERE id = ? AND deleted_at IS NULL", (item.source_id,)
        ).fetchone()
        if row is None:
            raise Invalid({f"{prefix}source_id": "no source has this id"})
        return str(row["id"])
    return personal_notes_source(conn)


PERSONAL_NOTES_NAME = "Personal notes"


def personal_notes_source(conn: sqlite3.Connection) -> str:
    """The id of the live `self` source, created (inside the caller's transaction) if none."""
    row = conn.execute(
        "SELECT id FROM sources WHERE type = 'self' AND deleted_at IS NULL"
    ).fetchone()
    if row is not None:
        return str(row["id"])
    source_id = str(uuid.uuid4())
    now = clock.now()
    conn.execute(
        "INSERT INTO sources(id, name, type, created_at, updated_at) VALUES (?, ?, 'self', ?, ?)",
        (source_id, PERSONAL_NOTES_NAME, now, now),
    )
    return source_id


@dataclass
class Batch:
    """What one transaction's inserts share: sources and tags already resolved, and the
    sources to mark updated once at the end rather than once per highlight."""

    sources: dict[SourceKey, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    touched_sources: set[str] = field(default_factory=set)
    now: str = ""

    def look_up_sources(self, conn: sqlite3.Connection, items: list[HighlightCreate]) -> None:
        """Find the batch's live sources (by `source_id`) in one query, not one per item.

        Ids not found are left out: the item's own lookup then reports them.
        """
        wanted = sorted({item.source_id for item in items if item.source_id is not None})
        for part in chunked(wanted):
            rows = conn.execute(
                f"SELECT id FROM sources WHERE id IN ({','.join('?' * len(part))}) "
                "AND deleted_at IS NULL",
                part,
            )
            for row in rows:
                self.sources[(row["id"], None)] = str(row["id"])

    def finish(self, conn: sqlite3.Connection) -> None:
        """Mark the touched sources updated (inside the transaction, before it commits)."""
        if self.touched_sources:
            conn.executemany(
                "UPDATE sources SET updated_at = ? WHERE id = ?",
                [(self.now, source_id) for source_id in sorted(self.touched_sources)],
            )
            self.touched_sources.clear()


def insert(
    conn: sqlite3.Connection, item: HighlightCreate, prefix: str, batch: Batch | None = None
) -> tuple[str, int]:
    """Insert a validated highlight inside the caller's transaction; returns (id, seq).

    With a `batch`, lookups are shared with the batch's other items and the source's
    `updated_at` waits for `batch.finish`; without one, it is done at once.
    """
    own = batch is None
    batch = Batch() if batch is None else batch
    source_id = _source_for(conn, item, prefix, batch.sources)
    tag_ids = tags.resolve(conn, item.tags or [], field=f"{prefix}tags", known=batch.tags)
    highlight_id = str(uuid.uuid4())
    now = clock.now()
    cursor = conn.execute(
        "INSERT INTO highlights(id, source_id, content, note, favorite, url, location, date, "
        "metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            highlight_id,
            source_id,
            item.content,
            item.note,
            int(bool(item.favorite)),
            item.url,
            item.location,
            item.date,
            json.dumps(item.metadata) if item.metadata else "{}",
            now,
            now,
        ),
    )
    if tag_ids:
        conn.executemany(
            "INSERT INTO highlight_tags(highlight_id, tag_id) VALUES (?, ?)",
            [(highlight_id, tag_id) for tag_id in tag_ids],
        )
    batch.touched_sources.add(source_id)
    batch.now = now
    if own:
        batch.finish(conn)
    assert cursor.lastrowid is not None
    return highlight_id, cursor.lastrowid


def create_many(
    library: Library, items: list[HighlightCreate], *, bulk: bool
) -> list[dict[str, Any]]:
    """Create highlights in one transaction: all of them, or (on any bad item) none."""
    created: list[tuple[str, int]] = []
    batch = Batch()
    with library.write() as conn:
        batch.look_up_sources(conn, items)
        for index, item in enumerate(items):
            prefix = f"highlights[{index}]." if bulk else ""
            created.append(insert(conn, item, prefix, batch))
        batch.finish(conn)
    library.notify_changed([seq for _, seq in created])
    by_seq = wire.highlights_by_seq(library.connection(), [seq for _, seq in created])
    return [by_seq[seq] for _, seq in created]


def update(library: Library, highlight_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Apply a partial update: only present keys change, `None` clears."""
    with library.write() as conn:
        row = _live_row(conn, highlight_id)
        columns: dict[str, Any] = {}
        for name in ("content", "note", "url", "location", "date"):
            if name in changes:
                columns[name] = changes[name]
        if "favorite" in changes:
            columns["favorite"] = int(bool(changes["favorite"]))
        if "metadata" in changes:
            columns["metadata"] = json.dumps(changes["metadata"] or {})
        columns["updated_at"] = clock.now()
        assignments = ", ".join(f"{name} = ?" for name in columns)
        conn.execute(
            f"UPDATE highlights SET {assignments} WHERE id = ?", [*columns.values(), row["id"]]
        )
        if "tags" in changes:
            tag_ids = tags.resolve(conn, changes["tags"] or [])  # null clears, like []
            conn.execute("DELETE FROM highlight_tags WHERE highlight_id = ?", (row["id"],))
            conn.executemany(
                "INSERT INTO highlight_tags(highlight_id, tag_id) VALUES (?, ?)",
                [(row["id"], tag_id) for tag_id in tag_ids],
            )
    if "content" in changes or "note" in changes:
        library.notify_changed([row["seq"]])
    # Like every other answer, `metadata` only when asked for (spec: include_metadata).
    return get(library.connection(), row["id"])


def delete(library: Library, highlight_id: str) -> dict[str, Any]:
    """Soft delete; repeating it is a success too (spec: idempotent)."""
    if not is_uuid(highlight_id):
        raise NotFound("Highlight", highlight_id)
    with library.write() as conn:
        row = conn.execute(
            "SELECT seq, id, source_id, deleted_at FROM highlights WHERE id = ?",
            (highlight_id.lower(),),
        ).fetchone()
        if row is None:
            raise NotFound("Highlight", highlight_id)
        newly = row["deleted_at"] is None
        if newly:
            now = clock.now()
            conn.execute(
                "UPDATE highlights SET deleted_at = ?, updated_at = ? WHERE id = ?",
                (now, now, row["id"]),
            )
            if row["source_id"] is not None:
                conn.execute(
                    "UPDATE sources SET updated_at = ? WHERE id = ?", (now, row["source_id"])
                )
    if newly:
        library.notify_removed([row["seq"]])
    return {"id": row["id"], "deleted": True}


def change_tags(
    library: Library, highlight_id: str, entries: list[str], *, add: bool
) -> list[dict[str, Any]]:
    """Add or remove tags; returns the highlight's full tag list afterwards."""
    with library.write() as conn:
        row = _live_row(conn, highlight_id)
        if add:
            tag_ids = tags.resolve(conn, entries)
            conn.executemany(
                "INSERT OR IGNORE INTO highlight_tags(highlight_id, tag_id) VALUES (?, ?)",
                [(row["id"], tag_id) for tag_id in tag_ids],
            )
        else:
            found = [tags.find(conn, entry) for entry in entries]
            conn.executemany(
                "DELETE FROM highlight_tags WHERE highlight_id = ? AND tag_id = ?",
                [(row["id"], tag["id"]) for tag in found if tag is not None],
            )
        conn.execute("UPDATE highlights SET updated_at = ? WHERE id = ?", (clock.now(), row["id"]))
    return tags.tags_of_highlights(library.connection(), [row["id"]])[row["id"]]
