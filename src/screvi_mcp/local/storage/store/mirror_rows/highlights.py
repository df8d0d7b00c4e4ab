"""Highlights from GET /highlights, tombstones included."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store.mirror_rows.rows import (
    Applied,
    Item,
    ensure_tag,
    insert_row,
    insert_stub_source,
    metadata_json,
    set_links,
    store_page,
    wire_id,
    wire_time,
)


def upsert_highlights(
    library: Library, highlights: Iterable[Item], *, state: Mapping[str, str | None] | None = None
) -> Applied:
    """Store a page of GET /highlights (with include_deleted and include_metadata)."""
    # Lists are newest first; stored oldest first, so that highlights created in the same
    # instant (a bulk create) keep the server's order among themselves (`seq` breaks ties).
    return store_page(library, reversed(list(highlights)), _upsert_highlight, state)


def _upsert_highlight(
    conn: sqlite3.Connection, highlight: Item, now: str, applied: Applied
) -> None:
    highlight_id = wire_id(highlight["id"])
    row = conn.execute(
        "SELECT seq, source_id, content, note, favorite, url, location, date, metadata, "
        "created_at, updated_at, deleted_at FROM highlights WHERE id = ?",
        (highlight_id,),
    ).fetchone()
    updated_at = wire_time(highlight.get("updated_at")) or now
    if highlight.get("deleted"):
        if row is not None and row["deleted_at"] is None:
            conn.execute(
                "UPDATE highlights SET deleted_at = ?, updated_at = ? WHERE seq = ?",
                (updated_at, updated_at, row["seq"]),
            )
            applied.removed_seqs.append(int(row["seq"]))
            applied.deleted += 1
        else:
            applied.unchanged += 1
        return
    values = _highlight_values(conn, highlight, updated_at, now, applied)
    source_id = values["source_id"]
    differs = False
    if row is None:
        values["metadata"] = values.get("metadata") or "{}"
        seq = insert_row(conn, "highlights", {"id": highlight_id, **values})
        applied.created += 1
        applied.changed_seqs.append(seq)
    else:
        seq = int(row["seq"])
        differs = row["deleted_at"] is not None or any(
            row[name] != value for name, value in values.items()
        )
        if differs:
            assignments = ", ".join(f"{name} = ?" for name in values)
            conn.execute(
                f"UPDATE highlights SET {assignments}, deleted_at = NULL WHERE seq = ?",
                [*values.values(), seq],
            )
            applied.updated += 1
            if (
                row["deleted_at"] is not None
                or row["content"] != values["content"]
                or row["note"] != values["note"]
                or row["source_id"] != source_id
            ):
                applied.changed_seqs.append(seq)
        else:
            applied.unchanged += 1
    tag_ids = [ensure_tag(conn, tag, now) for tag in highlight.get("tags") or []]
    retagged = set_links(conn, "highlight_tags", "highlight_id", highlight_id, tag_ids)
    if retagged and row is not None and not differs:
        applied.unchanged -= 1
        applied.updated += 1


def _highlight_values(
    conn: sqlite3.Connection, highlight: Item, updated_at: str, now: str, applied: Applied
) -> dict[str, Any]:
    """The stored columns of a live highlight (metadata only when the answer carried it). A
    source the mirror has not seen yet is stubbed, to be filled by its own list entry."""
    created_at = wire_time(highlight.get("created_at")) or updated_at
    source = highlight.get("source")
    source_id: str | None = None
    if isinstance(source, Mapping) and source.get("id"):
        source_id = wire_id(source["id"])
        if conn.execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).fetchone() is None:
            applied.removed_seqs.extend(insert_stub_source(conn, source, created_at, now))
    location = highlight.get("location")
    values: dict[str, Any] = {
        "source_id": source_id,
        "content": str(highlight.get("content") or ""),
        "note": highlight.get("note"),
        "favorite": int(bool(highlight.get("favorite"))),
        "url": highlight.get("url"),
        "location": float(location) if location is not None else None,
        "date": wire_time(highlight.get("date")),
        "created_at": created_at,
        "updated_at": updated_at,
    }
    metadata = metadata_json(highlight)
    if metadata is not None:
        values["metadata"] = metadata
    return values
