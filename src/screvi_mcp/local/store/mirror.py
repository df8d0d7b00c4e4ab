"""Writing a mirror of a Screvi account: items arrive with their own ids and timestamps.

The sync engine (`screvi_mcp.mirror`) reads pages through the public API and hands them here
as wire dictionaries (the spec's field names). Every call is one transaction: a page of
items lands whole or not at all, together with the resume point the caller passes in
`state`, so a run killed at any moment restarts from a page that was stored. Listeners
(the semantic index) are told after the commit, as for every other write, so mirrored
highlights are embedded locally.

Upserts are idempotent: storing the same page twice changes nothing. Tombstones
(`deleted: true`) soft-delete what the mirror has and are ignored for items it never had.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from screvi_mcp.local import clock
from screvi_mcp.local.fetching.urls import normalise_url
from screvi_mcp.local.library import Library
from screvi_mcp.local.store.pages import chunked

Item = Mapping[str, Any]

STATE_BASE_URL = "base_url"
STATE_KEY_FINGERPRINT = "key_fingerprint"


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


# --- mirror identity and progress ---------------------------------------------------------


def read_state(conn: sqlite3.Connection) -> dict[str, str]:
    return {row[0]: row[1] for row in conn.execute("SELECT key, value FROM mirror_state")}


def is_mirror(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM mirror_state WHERE key = ?", (STATE_BASE_URL,)
        ).fetchone()
        is not None
    )


def _write_state(conn: sqlite3.Connection, state: Mapping[str, str | None]) -> None:
    for key, value in state.items():
        if value is None:
            conn.execute("DELETE FROM mirror_state WHERE key = ?", (key,))
        else:
            conn.execute(
                "INSERT INTO mirror_state(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )


def write_state(library: Library, state: Mapping[str, str | None]) -> None:
    """Set (or, for None, clear) mirror state entries in one transaction."""
    with library.write() as conn:
        _write_state(conn, state)


def holds_data(conn: sqlite3.Connection) -> bool:
    """Whether the library has any tag, source or highlight (a mirror must start empty)."""
    return any(
        conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None
        for table in ("tags", "sources", "highlights")
    )


# --- helpers ------------------------------------------------------------------------------


def _ts(value: Any) -> str | None:
    """A wire timestamp in the library's stored format (None stays None)."""
    if value is None or value == "":
        return None
    try:
        return clock.normalise_timestamp(str(value))
    except (ValueError, OverflowError):
        return None


def _id(value: Any) -> str:
    return str(value).strip().lower()


def _metadata(item: Item) -> str | None:
    """JSON text of `metadata` when the page carried it; None means "keep what is stored"."""
    value = item.get("metadata")
    return json.dumps(value) if isinstance(value, dict) else None


def _json_or_null(value: Any) -> str | None:
    return json.dumps(value) if isinstance(value, dict) else None


def _ensure_tag(conn: sqlite3.Connection, tag: Item, now: str) -> str:
    """The tag row for a wire tag (by id), created or renamed to match; returns its id.

    A different local tag holding the same name is stale (names are unique on the server at
    any moment): its name key is parked under its id until the next full tag list renames or
    removes it, so its links are not lost meanwhile.
    """
    tag_id = _id(tag["id"])
    name = str(tag.get("name") or "").strip() or tag_id
    name_key = name.lower()
    color = tag.get("color")
    conn.execute(
        "UPDATE tags SET name_key = name_key || '#' || id WHERE name_key = ? AND id != ?",
        (name_key, tag_id),
    )
    created_at = _ts(tag.get("created_at"))
    updated_at = _ts(tag.get("updated_at"))
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


def _set_links(
    conn: sqlite3.Connection, table: str, owner_column: str, owner_id: str, tag_ids: list[str]
) -> bool:
    """Make an item's tag set exactly `tag_ids`; True when it changed."""
    before = {
        row[0]
        for row in conn.execute(
            f"SELECT tag_id FROM {table} WHERE {owner_column} = ?", (owner_id,)
        )
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


def _live_seqs_of_source(conn: sqlite3.Connection, source_id: str) -> list[int]:
    return [
        int(row[0])
        for row in conn.execute(
            "SELECT seq FROM highlights WHERE source_id = ? AND deleted_at IS NULL", (source_id,)
        )
    ]


def _soft_delete_source(conn: sqlite3.Connection, source_id: str, when: str) -> list[int]:
    """Tombstone a source and (as the server's cascade did) its live highlights."""
    removed = _live_seqs_of_source(conn, source_id)
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


def _make_room_for_self(conn: sqlite3.Connection, source_id: str, when: str) -> list[int]:
    """The server has one live personal-notes source; another live one here is stale."""
    stale = conn.execute(
        "SELECT id FROM sources WHERE type = 'self' AND deleted_at IS NULL AND id != ?",
        (source_id,),
    ).fetchall()
    removed: list[int] = []
    for row in stale:
        removed.extend(_soft_delete_source(conn, row[0], when))
    return removed


def _insert_stub_source(
    conn: sqlite3.Connection, source: Item, created_at: str, now: str
) -> list[int]:
    """A source known only from a highlight's embedded `source` (listed sources come first;
    one made during the run is completed by the next run's source list)."""
    source_id = _id(source["id"])
    kind = str(source.get("type") or "custom")
    removed = _make_room_for_self(conn, source_id, now) if kind == "self" else []
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


# --- tags -----------------------------------------------------------------------------------


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
        wanted = {_id(tag["id"]) for tag in items}
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
            tag_id = _id(tag["id"])
            before = local.get(tag_id)
            _ensure_tag(conn, tag, now)
            if before is None:
                applied.created += 1
            elif before != (str(tag.get("name") or "").strip(), tag.get("color")):
                applied.updated += 1
            else:
                applied.unchanged += 1
        if state:
            _write_state(conn, state)
    return applied


# --- sources --------------------------------------------------------------------------------


def upsert_sources(
    library: Library, sources: Iterable[Item], *, state: Mapping[str, str | None] | None = None
) -> Applied:
    """Store a page of GET /sources (with include_empty, include_deleted, include_metadata)."""
    applied = Applied()
    now = clock.now()
    with library.write() as conn:
        for source in sources:
            _upsert_source(conn, source, now, applied)
        if state:
            _write_state(conn, state)
    _notify(library, applied)
    return applied


def _upsert_source(conn: sqlite3.Connection, source: Item, now: str, applied: Applied) -> None:
    source_id = _id(source["id"])
    row = conn.execute("SELECT * FROM sources WHERE id = ?", (source_id,)).fetchone()
    if source.get("deleted"):
        if row is not None and row["deleted_at"] is None:
            applied.removed_seqs.extend(_soft_delete_source(conn, source_id, now))
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
    metadata = _metadata(source)
    if metadata is not None:
        values["metadata"] = metadata
    if kind == "self":
        applied.removed_seqs.extend(_make_room_for_self(conn, source_id, now))
    created_at = _ts(source.get("created_at"))
    if row is None:
        values["metadata"] = values.get("metadata") or "{}"
        columns = ["id", *values, "created_at", "updated_at"]
        conn.execute(
            f"INSERT INTO sources({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [source_id, *values.values(), created_at or now, now],
        )
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
                conn.execute(
                    "SELECT 1 FROM articles WHERE source_id = ?", (source_id,)
                ).fetchone()
                is not None
            )
            assignments = ", ".join(f"{name} = ?" for name in values)
            conn.execute(
                f"UPDATE sources SET {assignments}, deleted_at = NULL, updated_at = ? "
                "WHERE id = ?",
                [*values.values(), row["updated_at"] if is_article else now, source_id],
            )
            applied.updated += 1
            if row["name"] != values["name"] or row["author"] != values["author"]:
                applied.changed_seqs.extend(_live_seqs_of_source(conn, source_id))
    tag_ids = [_ensure_tag(conn, tag, now) for tag in source.get("tags") or []]
    _set_links(conn, "source_tags", "source_id", source_id, tag_ids)


# --- highlights -----------------------------------------------------------------------------


def upsert_highlights(
    library: Library, highlights: Iterable[Item], *, state: Mapping[str, str | None] | None = None
) -> Applied:
    """Store a page of GET /highlights (with include_deleted and include_metadata)."""
    applied = Applied()
    now = clock.now()
    with library.write() as conn:
        # Lists are newest first; stored oldest first, so that highlights created in the same
        # instant (a bulk create) keep the server's order among themselves (`seq` breaks ties).
        for highlight in reversed(list(highlights)):
            _upsert_highlight(conn, highlight, now, applied)
        if state:
            _write_state(conn, state)
    _notify(library, applied)
    return applied


def _upsert_highlight(
    conn: sqlite3.Connection, highlight: Item, now: str, applied: Applied
) -> None:
    highlight_id = _id(highlight["id"])
    row = conn.execute(
        "SELECT seq, source_id, content, note, favorite, url, location, date, metadata, "
        "created_at, updated_at, deleted_at FROM highlights WHERE id = ?",
        (highlight_id,),
    ).fetchone()
    updated_at = _ts(highlight.get("updated_at")) or now
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
    created_at = _ts(highlight.get("created_at")) or updated_at
    source = highlight.get("source")
    source_id: str | None = None
    if isinstance(source, Mapping) and source.get("id"):
        source_id = _id(source["id"])
        if conn.execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).fetchone() is None:
            applied.removed_seqs.extend(_insert_stub_source(conn, source, created_at, now))
    location = highlight.get("location")
    values: dict[str, Any] = {
        "source_id": source_id,
        "content": str(highlight.get("content") or ""),
        "note": highlight.get("note"),
        "favorite": int(bool(highlight.get("favorite"))),
        "url": highlight.get("url"),
        "location": float(location) if location is not None else None,
        "date": _ts(highlight.get("date")),
        "created_at": created_at,
        "updated_at": updated_at,
    }
    metadata = _metadata(highlight)
    if metadata is not None:
        values["metadata"] = metadata
    differs = False
    if row is None:
        values["metadata"] = values.get("metadata") or "{}"
        columns = ["id", *values]
        cursor = conn.execute(
            f"INSERT INTO highlights({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))})",
            [highlight_id, *values.values()],
        )
        assert cursor.lastrowid is not None
        seq = int(cursor.lastrowid)
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
    tag_ids = [_ensure_tag(conn, tag, now) for tag in highlight.get("tags") or []]
    retagged = _set_links(conn, "highlight_tags", "highlight_id", highlight_id, tag_ids)
    if retagged and row is not None and not differs:
        applied.unchanged -= 1
        applied.updated += 1


# --- articles -------------------------------------------------------------------------------


def upsert_articles(
    library: Library, articles: Iterable[Item], *, state: Mapping[str, str | None] | None = None
) -> Applied:
    """Store a page of GET /articles (with include_deleted): the reading-list fields.

    Bodies and the other detail fields come from `store_article_detail`.
    """
    applied = Applied()
    now = clock.now()
    with library.write() as conn:
        for article in articles:
            _upsert_article(conn, article, now, applied)
        if state:
            _write_state(conn, state)
    _notify(library, applied)
    return applied


def _url_key(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return normalise_url(url)
    except ValueError:
        return url


def _upsert_article(conn: sqlite3.Connection, article: Item, now: str, applied: Applied) -> None:
    article_id = _id(article["id"])
    source = conn.execute("SELECT * FROM sources WHERE id = ?", (article_id,)).fetchone()
    updated_at = _ts(article.get("updated_at")) or now
    if article.get("deleted"):
        if source is not None and source["deleted_at"] is None:
            applied.removed_seqs.extend(_soft_delete_source(conn, article_id, updated_at))
            applied.deleted += 1
        else:
            applied.unchanged += 1
        return
    url = str(article.get("url") or "")
    title = article.get("title")
    saved_at = _ts(article.get("saved_at")) or updated_at
    source_values: dict[str, Any] = {
        "author": article.get("author"),
        "image_url": article.get("image_url"),
        "note": article.get("note"),
        "updated_at": updated_at,
    }
    if source is None:
        conn.execute(
            "INSERT INTO sources(id, name, type, url, created_at, updated_at) "
            "VALUES (?, ?, 'article', ?, ?, ?)",
            (article_id, title or url, url or None, saved_at, updated_at),
        )
        renamed = False
    else:
        if title:
            source_values["name"] = title
        renamed = any(
            source[name] != source_values[name]
            for name in ("name", "author")
            if name in source_values
        )
    assignments = ", ".join(f"{name} = ?" for name in source_values)
    conn.execute(
        f"UPDATE sources SET {assignments}, deleted_at = NULL WHERE id = ?",
        [*source_values.values(), article_id],
    )
    canonical_url = article.get("canonical_url")
    values: dict[str, Any] = {
        "title": title,
        "url": url,
        "url_key": _url_key(url) or article_id,
        "canonical_url": canonical_url,
        "canonical_key": _url_key(canonical_url),
        "excerpt": article.get("excerpt"),
        "status": str(article.get("status") or "unread"),
        "home_status": str(article.get("home_status") or "inbox"),
        "favorite": int(bool(article.get("favorite"))),
        "progress_percentage": int(article.get("progress_percentage") or 0),
        "reading_time_minutes": article.get("reading_time_minutes"),
        "word_count": article.get("word_count"),
        "source_domain": article.get("source_domain"),
        "site_name": article.get("site_name"),
        "language": article.get("language"),
        "saved_at": saved_at,
        "published_date": _ts(article.get("published_date")),
        "parse_state": str(article.get("parse_state") or "queued"),
    }
    existing = conn.execute(
        "SELECT * FROM articles WHERE source_id = ?", (article_id,)
    ).fetchone()
    if existing is None:
        columns = ["source_id", *values]
        conn.execute(
            f"INSERT INTO articles({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [article_id, *values.values()],
        )
        applied.created += 1
    else:
        differs = source is None or source["updated_at"] != updated_at or any(
            existing[name] != value for name, value in values.items()
        )
        assignments = ", ".join(f"{name} = ?" for name in values)
        conn.execute(
            f"UPDATE articles SET {assignments} WHERE source_id = ?",
            [*values.values(), article_id],
        )
        if differs:
            applied.updated += 1
        else:
            applied.unchanged += 1
    tag_ids = [_ensure_tag(conn, tag, now) for tag in article.get("tags") or []]
    _set_links(conn, "source_tags", "source_id", article_id, tag_ids)
    if renamed:
        applied.changed_seqs.extend(_live_seqs_of_source(conn, article_id))


def articles_needing_detail(conn: sqlite3.Connection, limit: int = 1000) -> list[str]:
    """Live articles whose stored detail is missing or older than their listed version."""
    rows = conn.execute(
        "SELECT a.source_id FROM articles a JOIN sources s ON s.id = a.source_id "
        "LEFT JOIN mirror_article_details d ON d.article_id = a.source_id "
        "WHERE s.deleted_at IS NULL AND (d.updated_at IS NULL OR d.updated_at != s.updated_at) "
        "ORDER BY a.saved_at DESC LIMIT ?",
        (limit,),
    ).fetchall()
    return [str(row[0]) for row in rows]


def count_articles_needing_detail(conn: sqlite3.Connection) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM articles a JOIN sources s ON s.id = a.source_id "
            "LEFT JOIN mirror_article_details d ON d.article_id = a.source_id "
            "WHERE s.deleted_at IS NULL AND (d.updated_at IS NULL OR d.updated_at != s.updated_at)"
        ).fetchone()[0]
    )


def store_article_detail(
    library: Library,
    article_id: str,
    detail: Item,
    *,
    content_html: str | None,
    content_text: str | None,
) -> bool:
    """Store an article's body and detail fields (GET /articles/{id}); False if it is gone.

    The detail is recorded as current for the article's listed `updated_at`.
    """
    article_id = _id(article_id)
    with library.write() as conn:
        row = conn.execute(
            "SELECT s.updated_at FROM articles a JOIN sources s ON s.id = a.source_id "
            "WHERE a.source_id = ?",
            (article_id,),
        ).fetchone()
        if row is None:
            return False
        conn.execute(
            "UPDATE articles SET content_html = ?, content_text = ?, parse_error = ?, "
            "parse_failure = ?, pdf_url = ?, epub_url = ?, last_fetched_at = ?, "
            "started_reading_at = ?, completed_reading_at = ?, summary = ?, transcript = ?, "
            "parse_state = coalesce(?, parse_state) WHERE source_id = ?",
            (
                content_html,
                content_text,
                detail.get("parse_error"),
                _json_or_null(detail.get("parse_failure")),
                detail.get("pdf_url"),
                detail.get("epub_url"),
                _ts(detail.get("last_fetched_at")),
                _ts(detail.get("started_reading_at")),
                _ts(detail.get("completed_reading_at")),
                detail.get("summary"),
                _json_or_null(detail.get("transcript")),
                detail.get("parse_state"),
                article_id,
            ),
        )
        # Marked done for the listed version: if the server's article moved on meanwhile,
        # its newer updated_at lists it again next run, and it is fetched again then.
        conn.execute(
            "INSERT INTO mirror_article_details(article_id, updated_at) VALUES (?, ?) "
            "ON CONFLICT(article_id) DO UPDATE SET updated_at = excluded.updated_at",
            (article_id, row[0]),
        )
    return True


def _notify(library: Library, applied: Applied) -> None:
    removed = sorted(set(applied.removed_seqs))
    changed = sorted(set(applied.changed_seqs) - set(removed))
    library.notify_removed(removed)
    library.notify_changed(changed)


# --- single changes a write through the mirror reports back --------------------------------


def upsert_tag(library: Library, tag: Item) -> None:
    """A tag the server just created or changed."""
    with library.write() as conn:
        _ensure_tag(conn, tag, clock.now())


def delete_tag(library: Library, tag_id: str) -> None:
    """A tag the server just deleted (hard): detached everywhere here too."""
    with library.write() as conn:
        conn.execute("DELETE FROM tags WHERE id = ?", (_id(tag_id),))


def set_item_tags(library: Library, kind: str, item_id: str, tags: Iterable[Item]) -> bool:
    """Make a highlight's (`kind="highlight"`) or article's tag set the server's full list.

    False when the mirror does not hold the item (the next sync brings it).
    """
    table, owner, owners = (
        ("highlight_tags", "highlight_id", "highlights")
        if kind == "highlight"
        else ("source_tags", "source_id", "sources")
    )
    item_id = _id(item_id)
    now = clock.now()
    with library.write() as conn:
        if conn.execute(f"SELECT 1 FROM {owners} WHERE id = ?", (item_id,)).fetchone() is None:
            return False
        tag_ids = [_ensure_tag(conn, tag, now) for tag in tags]
        _set_links(conn, table, owner, item_id, tag_ids)
    return True


def unknown_tag_ids(conn: sqlite3.Connection, tag_ids: Iterable[str]) -> set[str]:
    """Which of these tag ids the mirror does not hold yet."""
    wanted = {_id(tag_id) for tag_id in tag_ids}
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
    tag_id = _id(tag_id)
    wanted = {_id(member) for member in member_ids}
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
