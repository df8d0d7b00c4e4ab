"""What every kind of mirrored item shares: wire values in the stored format, tags and
tag links, source tombstones, and the `Applied` tally that tells listeners what changed."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store.mirror_rows.state import write_state_in

Item = Mapping[str, Any]


@dataclass
class Applied:
    """What one call changed, for progress lines and the end summary."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    changed_seqs: list[int] = field(default_factory=list)
    removed_seqs: list[int] = field(default_factory=list)

    def add(self, other: Applied) -> None:
        self.created += other.created
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.deleted += other.deleted


def store_page(
    library: Library,
    items: Iterable[Item],
    upsert_one: Callable[[sqlite3.Connection, Item, str, Applied], None],
    state: Mapping[str, str | None] | None,
) -> Applied:
    """One page of a listing in one transaction, with the resume point `state` (see
    state.write_state_in); listeners are told after the commit."""
    applied = Applied()
    now = clock.now()
    with library.write() as conn:
        for item in items:
            upsert_one(conn, item, now, applied)
        if state:
            write_state_in(conn, state)
    notify(library, applied)
    return applied


def insert_row(conn: sqlite3.Connection, table: str, values: Mapping[str, Any]) -> int:
    """INSERT one row of `values` (column -> value) into `table`; its rowid."""
    cursor = conn.execute(
        f"INSERT INTO {table}({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
        list(values.values()),
    )
    assert cursor.lastrowid is not None
    return int(cursor.lastrowid)


def notify(library: Library, applied: Applied) -> None:
    """Tell the library's listeners (the semantic index) what a committed call changed."""
    removed = sorted(set(applied.removed_seqs))
    changed = sorted(set(applied.changed_seqs) - set(removed))
    library.notify_removed(removed)
    library.notify_changed(changed)


def wire_time(value: Any) -> str | None:
    """A wire timestamp in the library's stored format (None stays None)."""
    if value is None or value == "":
        return None
    try:
        return clock.normalise_timestamp(str(value))
    except (ValueError, OverflowError):
        return None


def wire_id(value: Any) -> str:
    return str(value).strip().lower()


def metadata_json(item: Item) -> str | None:
    """JSON text of `metadata` when the page carried it; None means "keep what is stored"."""
    value = item.get("metadata")
    return json.dumps(value) if isinstance(value, dict) else None


def json_or_null(value: Any) -> str | None:
    return json.dumps(value) if isinstance(value, dict) else None


def ensure_tag(conn: sqlite3.Connection, tag: Item, now: str) -> str:
    """The tag row for a wire tag (by id), created or renamed to match; returns its id.

    A different local tag holding the same name is stale (names are unique on the server at
    any moment): its name key is parked under its id until the next full tag list renames or
    removes it, so its links are not lost meanwhile.
    """
    tag_id = wire_id(tag["id"])
    name = str(tag.get("name") or "").strip() or tag_id
    name_key = name.lower()
    color = tag.get("color")
    conn.execute(
        "UPDATE tags SET name_key = name_key || '#' || id WHERE name_key = ? AND id != ?",
        (name_key, tag_id),
    )
    created_at = wire_time(tag.get("created_at"))
    updated_at = wire_time(tag.get("updated_at"))
    row = conn.execute(
        "SELECT name, name_key, color, created_at, updated_at FROM tags WHERE id = ?", (tag_id,)
    ).fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO tags(id, name, name_key, color, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (tag_id, name, name_key, color, created_at or now, updated_at or now),
        )
        return tag_id
    # Timestamps only when the server sent them (a tag embedded in a highlight has none).
    wanted = {
        "name": name,
        "name_key": name_key,
        "color": color,
        "created_at": created_at or row["created_at"],
        "updated_at": updated_at or row["updated_at"],
    }
    if any(row[column] != value for column, value in wanted.items()):
        if updated_at is None and (row["name"], row["color"]) != (name, color):
            wanted["updated_at"] = now
        conn.execute(
            "UPDATE tags SET name = ?, name_key = ?, color = ?, created_at = ?, updated_at = ? "
            "WHERE id = ?",
            [*wanted.values(), tag_id],
        )
    return tag_id


def set_links(
    conn: sqlite3.Connection, table: str, owner_column: str, owner_id: str, tag_ids: list[str]
) -> bool:
    """Make an item's tag set exactly `tag_ids`; True when it changed."""
    before = {
        row[0]
        for row in conn.execute(f"SELECT tag_id FROM {table} WHERE {owner_column} = ?", (owner_id,))
    }
    wanted = set(tag_ids)
    if before == wanted:
        return False
    conn.execute(f"DELETE FROM {table} WHERE {owner_column} = ?", (owner_id,))
    conn.executemany(
        f"INSERT INTO {table}({owner_column}, tag_id) VALUES (?, ?)",
        [(owner_id, tag_id) for tag_id in sorted(wanted)],
    )
    return True


def live_seqs_of_source(conn: sqlite3.Connection, source_id: str) -> list[int]:
    return [
        int(row[0])
        for row in conn.execute(
            "SELECT seq FROM highlights WHERE source_id = ? AND deleted_at IS NULL", (source_id,)
        )
    ]


def soft_delete_source(conn: sqlite3.Connection, source_id: str, when: str) -> list[int]:
    """Tombstone a source and (as the server's cascade did) its live highlights."""
    removed = live_seqs_of_source(conn, source_id)
    conn.execute(
        "UPDATE highlights SET deleted_at = ?, updated_at = ? "
        "WHERE source_id = ? AND deleted_at IS NULL",
        (when, when, source_id),
    )
    conn.execute(
        "UPDATE sources SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL",
        (when, when, source_id),
    )
    return removed


def make_room_for_self(conn: sqlite3.Connection, source_id: str, when: str) -> list[int]:
    """The server has one live personal-notes source; another live one here is stale."""
    stale = conn.execute(
        "SELECT id FROM sources WHERE type = 'self' AND deleted_at IS NULL AND id != ?",
        (source_id,),
    ).fetchall()
    removed: list[int] = []
    for row in stale:
        removed.extend(soft_delete_source(conn, row[0], when))
    return removed


def insert_stub_source(
    conn: sqlite3.Connection, source: Item, created_at: str, now: str
) -> list[int]:
    """A source known only from a highlight's embedded `source` (listed sources come first;
    one made during the run is completed by the next run's source list)."""
    source_id = wire_id(source["id"])
    kind = str(source.get("type") or "custom")
    removed = make_room_for_self(conn, source_id, now) if kind == "self" else []
    conn.execute(
        "INSERT INTO sources(id, name, type, author, image_url, url, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            source_id,
            str(source.get("name") or ""),
            kind,
            source.get("author"),
            source.get("image_url"),
            source.get("url"),
            created_at,
            now,
        ),
    )
    return removed
