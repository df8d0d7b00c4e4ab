"""Sources from GET /sources, tombstones included."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping

from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store.mirror_rows.rows import (
    Applied,
    Item,
    ensure_tag,
    insert_row,
    live_seqs_of_source,
    make_room_for_self,
    metadata_json,
    set_links,
    soft_delete_source,
    store_page,
    wire_id,
    wire_time,
)


def upsert_sources(
    library: Library, sources: Iterable[Item], *, state: Mapping[str, str | None] | None = None
) -> Applied:
    """Store a page of GET /sources (with include_empty, include_deleted, include_metadata)."""
    return store_page(library, sources, _upsert_source, state)


def _upsert_source(conn: sqlite3.Connection, source: Item, now: str, applied: Applied) -> None:
    source_id = wire_id(source["id"])
    row = conn.execute("SELECT * FROM sources WHERE id = ?", (source_id,)).fetchone()
    if source.get("deleted"):
        if row is not None and row["deleted_at"] is None:
            applied.removed_seqs.extend(soft_delete_source(conn, source_id, now))
            applied.deleted += 1
        else:
            applied.unchanged += 1
        return
    kind = str(source.get("type") or (row["type"] if row is not None else "custom"))
    values = {
        "name": str(source.get("name") or ""),
        "type": kind,
        "author": source.get("author"),
        "image_url": source.get("image_url"),
        "url": source.get("url"),
        "origin": source.get("origin"),
        "note": source.get("note"),
    }
    metadata = metadata_json(source)
    if metadata is not None:
        values["metadata"] = metadata
    if kind == "self":
        applied.removed_seqs.extend(make_room_for_self(conn, source_id, now))
    created_at = wire_time(source.get("created_at"))
    if row is None:
        values["metadata"] = values.get("metadata") or "{}"
        stamps = {"created_at": created_at or now, "updated_at": now}
        insert_row(conn, "sources", {"id": source_id, **values, **stamps})
        applied.created += 1
    else:
        if created_at is not None:
            values["created_at"] = created_at
        differs = any(row[name] != value for name, value in values.items())
        if not differs and row["deleted_at"] is None:
            applied.unchanged += 1
        else:
            # An article's updated_at is the server's, set from GET /articles (the version
            # its detail is fetched for); only other sources take the time of the change.
            is_article = (
                conn.execute("SELECT 1 FROM articles WHERE source_id = ?", (source_id,)).fetchone()
                is not None
            )
            assignments = ", ".join(f"{name} = ?" for name in values)
            conn.execute(
                f"UPDATE sources SET {assignments}, deleted_at = NULL, updated_at = ? WHERE id = ?",
                [*values.values(), row["updated_at"] if is_article else now, source_id],
            )
            applied.updated += 1
            if row["name"] != values["name"] or row["author"] != values["author"]:
                applied.changed_seqs.extend(live_seqs_of_source(conn, source_id))
    tag_ids = [ensure_tag(conn, tag, now) for tag in source.get("tags") or []]
    set_links(conn, "source_tags", "source_id", source_id, tag_ids)
