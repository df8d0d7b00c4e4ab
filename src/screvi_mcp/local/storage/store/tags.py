"""Tags: matched by name case-insensitively, or by id; created on first use."""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.ids import is_uuid
from screvi_mcp.local.storage.store.pages import chunked
from screvi_mcp.local.storage.store.refusals import Invalid, NotFound


def render(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "color": row["color"]}


def find(conn: sqlite3.Connection, entry: str) -> sqlite3.Row | None:
    """The tag an entry names: an id first, then a name in any case."""
    if is_uuid(entry):
        row = conn.execute("SELECT * FROM tags WHERE id = ?", (entry.lower(),)).fetchone()
        if row is not None:
            return row
    return conn.execute(
        "SELECT * FROM tags WHERE name_key = ?", (entry.strip().lower(),)
    ).fetchone()


def create(conn: sqlite3.Connection, name: str, color: str | None = None) -> sqlite3.Row:
    now = clock.now()
    tag_id = str(uuid.uuid4())
    conn.execute(
        "INSERT INTO tags(id, name, name_key, color, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (tag_id, name.strip(), name.strip().lower(), color, now, now),
    )
    row = conn.execute("SELECT * FROM tags WHERE id = ?", (tag_id,)).fetchone()
    assert row is not None
    return row


def resolve(
    conn: sqlite3.Connection,
    entries: list[str],
    *,
    field: str = "tags",
    create_missing: bool = True,
    known: dict[str, str] | None = None,
) -> list[str]:
    """Tag ids for `entries` (names or ids), creating new names; inside the caller's transaction.

    An id-shaped entry that is neither a tag id nor a tag name is refused rather than turned
    into a tag called by that id. `known` maps entries already resolved in this transaction
    to their ids (a bulk create names the same few tags again and again).
    """
    ids: list[str] = []
    problems: dict[str, str] = {}
    for index, entry in enumerate(entries):
        tag_id = known.get(entry) if known is not None else None
        if tag_id is None:
            row = find(conn, entry)
            if row is None:
                if is_uuid(entry):
                    problems[f"{field}[{index}]"] = f"no tag has the id {entry}"
                    continue
                if not create_missing:
                    continue
                row = create(conn, entry)
            tag_id = str(row["id"])
            if known is not None:
                known[entry] = tag_id
        if tag_id not in ids:
            ids.append(tag_id)
    if problems:
        raise Invalid(problems)
    return ids


def tags_of_highlights(
    conn: sqlite3.Connection, highlight_ids: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """Each highlight's tags, by name, for a page of highlights in one query per 500."""
    return _tags_of(conn, "highlight_tags", "highlight_id", highlight_ids)


def tags_of_sources(
    conn: sqlite3.Connection, source_ids: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """Each source's tags (only articles have any)."""
    return _tags_of(conn, "source_tags", "source_id", source_ids)


def _tags_of(
    conn: sqlite3.Connection, link_table: str, owner_column: str, owner_ids: list[str]
) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {owner: [] for owner in owner_ids}
    for part in chunked(owner_ids):
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT link.{owner_column} AS owner, t.id, t.name, t.color FROM {link_table} link "
            f"JOIN tags t ON t.id = link.tag_id WHERE link.{owner_column} IN ({marks}) "
            "ORDER BY t.name_key",
            part,
        ).fetchall()
        for row in rows:
            found[row["owner"]].append(render(row))
    return found


# --- the /tags resource ----------------------------------------------------------------


def _with_counts(conn: sqlite3.Connection, where: str = "", args: tuple[Any, ...] = ()) -> Any:
    return conn.execute(
        "SELECT t.*, "
        " (SELECT count(*) FROM highlight_tags ht JOIN highlights h ON h.id = ht.highlight_id"
        "   WHERE ht.tag_id = t.id AND h.deleted_at IS NULL) AS highlight_count,"
        " (SELECT count(*) FROM source_tags st JOIN articles a ON a.source_id = st.source_id"
        "   JOIN sources s ON s.id = st.source_id"
        "   WHERE st.tag_id = t.id AND s.deleted_at IS NULL) AS article_count "
        f"FROM tags t {where} ORDER BY t.name_key",
        args,
    )


def render_with_counts(row: sqlite3.Row) -> dict[str, Any]:
    return {
        **render(row),
        "highlight_count": row["highlight_count"],
        "article_count": row["article_count"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def list_all(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    return [render_with_counts(row) for row in _with_counts(conn).fetchall()]


def get_with_counts(conn: sqlite3.Connection, tag_id: str) -> dict[str, Any]:
    row = _with_counts(conn, "WHERE t.id = ?", (tag_id,)).fetchone()
    if row is None:
        raise NotFound("Tag", tag_id)
    return render_with_counts(row)


def create_or_get(conn: sqlite3.Connection, name: str, color: str | None) -> tuple[bool, str]:
    """(created, tag id): an existing name in any case is returned, not duplicated."""
    existing = conn.execute(
        "SELECT id FROM tags WHERE name_key = ?", (name.strip().lower(),)
    ).fetchone()
    if existing is not None:
        return False, str(existing["id"])
    return True, str(create(conn, name, color)["id"])


def _touch_carriers(conn: sqlite3.Connection, tag_id: str, now: str) -> None:
    """Bump everything carrying the tag, so `updated_since` syncs see the change."""
    conn.execute(
        "UPDATE highlights SET updated_at = ? "
        "WHERE id IN (SELECT highlight_id FROM highlight_tags WHERE tag_id = ?)",
        (now, tag_id),
    )
    conn.execute(
        "UPDATE sources SET updated_at = ? "
        "WHERE id IN (SELECT source_id FROM source_tags WHERE tag_id = ?)",
        (now, tag_id),
    )


def update(conn: sqlite3.Connection, tag_id: str, changes: dict[str, Any]) -> None:
    row = conn.execute("SELECT * FROM tags WHERE id = ?", (tag_id,)).fetchone()
    if row is None:
        raise NotFound("Tag", tag_id)
    now = clock.now()
    if "name" in changes:
        name = str(changes["name"]).strip()
        clash = conn.execute(
            "SELECT id FROM tags WHERE name_key = ? AND id != ?", (name.lower(), tag_id)
        ).fetchone()
        if clash is not None:
            raise Invalid({"name": f"a tag named {name!r} already exists"})
        conn.execute(
            "UPDATE tags SET name = ?, name_key = ?, updated_at = ? WHERE id = ?",
            (name, name.lower(), now, tag_id),
        )
        _touch_carriers(conn, tag_id, now)
    if "color" in changes:
        conn.execute(
            "UPDATE tags SET color = ?, updated_at = ? WHERE id = ?",
            (changes["color"], now, tag_id),
        )


def delete(conn: sqlite3.Connection, tag_id: str) -> dict[str, Any]:
    if conn.execute("SELECT 1 FROM tags WHERE id = ?", (tag_id,)).fetchone() is None:
        raise NotFound("Tag", tag_id)
    highlights = conn.execute(
        "SELECT count(*) FROM highlight_tags WHERE tag_id = ?", (tag_id,)
    ).fetchone()[0]
    articles = conn.execute(
        "SELECT count(*) FROM source_tags WHERE tag_id = ?", (tag_id,)
    ).fetchone()[0]
    _touch_carriers(conn, tag_id, clock.now())
    conn.execute("DELETE FROM tags WHERE id = ?", (tag_id,))  # link rows cascade
    return {
        "id": tag_id,
        "deleted": True,
        "removed_from": highlights + articles,
        "highlights_affected": highlights,
        "articles_affected": articles,
    }
