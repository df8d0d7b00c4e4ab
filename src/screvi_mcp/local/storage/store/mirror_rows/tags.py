"""Tags: the full list (hard deletes included), single changes a write reports back, and
tag membership settled from counts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping

from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store.mirror_rows.rows import (
    Applied,
    Item,
    ensure_tag,
    set_links,
    wire_id,
)
from screvi_mcp.local.storage.store.mirror_rows.state import write_state_in
from screvi_mcp.local.storage.store.pages import chunked


def replace_tags(
    library: Library, tags: Iterable[Item], *, state: Mapping[str, str | None] | None = None
) -> Applied:
    """Make the mirror's tags exactly the server's full list (GET /tags).

    Tags are hard-deleted on the server (no tombstones), so a tag the list no longer has is
    deleted here too, detaching it everywhere, as the server did.
    """
    applied = Applied()
    now = clock.now()
    items = list(tags)
    with library.write() as conn:
        wanted = {wire_id(tag["id"]) for tag in items}
        local = {
            row["id"]: (row["name"], row["color"])
            for row in conn.execute("SELECT id, name, color FROM tags")
        }
        gone = [tag_id for tag_id in local if tag_id not in wanted]
        conn.executemany("DELETE FROM tags WHERE id = ?", [(tag_id,) for tag_id in gone])
        applied.deleted = len(gone)
        # Renames may swap names between tags: park every incoming name key first.
        conn.executemany(
            "UPDATE tags SET name_key = '#' || id WHERE id = ?", [(tag_id,) for tag_id in wanted]
        )
        for tag in items:
            tag_id = wire_id(tag["id"])
            before = local.get(tag_id)
            ensure_tag(conn, tag, now)
            if before is None:
                applied.created += 1
            elif before != (str(tag.get("name") or "").strip(), tag.get("color")):
                applied.updated += 1
            else:
                applied.unchanged += 1
        if state:
            write_state_in(conn, state)
    return applied


def upsert_tag(library: Library, tag: Item) -> None:
    """A tag the server just created or changed."""
    with library.write() as conn:
        ensure_tag(conn, tag, clock.now())


def delete_tag(library: Library, tag_id: str) -> None:
    """A tag the server just deleted (hard): detached everywhere here too."""
    with library.write() as conn:
        conn.execute("DELETE FROM tags WHERE id = ?", (wire_id(tag_id),))


def set_item_tags(library: Library, kind: str, item_id: str, tags: Iterable[Item]) -> bool:
    """Make a highlight's (`kind="highlight"`) or article's tag set the server's full list.

    False when the mirror does not hold the item (the next sync brings it).
    """
    table, owner, owners = (
        ("highlight_tags", "highlight_id", "highlights")
        if kind == "highlight"
        else ("source_tags", "source_id", "sources")
    )
    item_id = wire_id(item_id)
    now = clock.now()
    with library.write() as conn:
        if conn.execute(f"SELECT 1 FROM {owners} WHERE id = ?", (item_id,)).fetchone() is None:
            return False
        tag_ids = [ensure_tag(conn, tag, now) for tag in tags]
        set_links(conn, table, owner, item_id, tag_ids)
    return True


def unknown_tag_ids(conn: sqlite3.Connection, tag_ids: Iterable[str]) -> set[str]:
    """Which of these tag ids the mirror does not hold yet."""
    wanted = {wire_id(tag_id) for tag_id in tag_ids}
    known = {
        row[0]
        for part in chunked(sorted(wanted))
        for row in conn.execute(
            f"SELECT id FROM tags WHERE id IN ({','.join('?' * len(part))})", part
        )
    }
    return wanted - known


def tag_counts(conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """Each tag's live highlight and article counts here, as GET /tags counts them."""
    return {
        row[0]: (int(row[1]), int(row[2]))
        for row in conn.execute(
            "SELECT t.id,"
            " (SELECT count(*) FROM highlight_tags ht JOIN highlights h ON h.id = ht.highlight_id"
            "   WHERE ht.tag_id = t.id AND h.deleted_at IS NULL),"
            " (SELECT count(*) FROM source_tags st JOIN articles a ON a.source_id = st.source_id"
            "   JOIN sources s ON s.id = st.source_id"
            "   WHERE st.tag_id = t.id AND s.deleted_at IS NULL) "
            "FROM tags t"
        )
    }


def set_tag_members(library: Library, tag_id: str, kind: str, member_ids: Iterable[str]) -> int:
    """Make the live highlights (`kind="highlight"`) or articles carrying a tag exactly
    `member_ids` (those the mirror holds); returns how many links changed.

    For servers whose items do not show a tag change in `updated_at`: the sync compares
    tag counts and, where they differ, reads the tag's members and settles them here.
    """
    tag_id = wire_id(tag_id)
    wanted = {wire_id(member) for member in member_ids}
    if kind == "highlight":
        table, owner = "highlight_tags", "highlight_id"
        live = "SELECT id FROM highlights WHERE deleted_at IS NULL"
    else:
        table, owner = "source_tags", "source_id"
        live = (
            "SELECT a.source_id AS id FROM articles a JOIN sources s ON s.id = a.source_id "
            "WHERE s.deleted_at IS NULL"
        )
    with library.write() as conn:
        if conn.execute("SELECT 1 FROM tags WHERE id = ?", (tag_id,)).fetchone() is None:
            return 0
        present = {
            row[0]
            for row in conn.execute(
                f"SELECT {owner} FROM {table} WHERE tag_id = ? AND {owner} IN "
                f"(SELECT id FROM ({live}))",
                (tag_id,),
            )
        }
        held = {
            row[0]
            for part in chunked(sorted(wanted))
            for row in conn.execute(
                f"SELECT id FROM ({live}) WHERE id IN ({','.join('?' * len(part))})", part
            )
        }
        to_add = held - present
        to_remove = present - wanted
        conn.executemany(
            f"INSERT OR IGNORE INTO {table}({owner}, tag_id) VALUES (?, ?)",
            [(member, tag_id) for member in sorted(to_add)],
        )
        conn.executemany(
            f"DELETE FROM {table} WHERE {owner} = ? AND tag_id = ?",
            [(member, tag_id) for member in sorted(to_remove)],
        )
    return len(to_add) + len(to_remove)
