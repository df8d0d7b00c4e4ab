"""Saved articles: the reading list. Rows, states, filters and reading in chunks.

Fetching and extracting page bodies happens elsewhere (the `fetching` package); this module
only stores what it is given and serves it back.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.ids import is_uuid
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import tags, wire
from screvi_mcp.local.storage.store.chunks import slice_content
from screvi_mcp.local.storage.store.pages import like_pattern, offset, pagination
from screvi_mcp.local.storage.store.refusals import NotFound

if TYPE_CHECKING:
    from screvi_mcp.local.fetching.save import SaveOutcome

SORT_COLUMNS = {
    "saved_at": "a.saved_at",
    "published_date": "a.published_date",
    "reading_time_minutes": "a.reading_time_minutes",
    "highlight_count": "highlight_count",
    "updated_at": "s.updated_at",
}


@dataclass(frozen=True)
class ArticleFilters:
    q: str | None = None
    status: str | None = None
    home_status: str | None = None
    favorite: bool | None = None
    has_highlights: bool | None = None
    tag: str | None = None
    updated_since: str | None = None
    saved_since: str | None = None
    saved_before: str | None = None
    include_deleted: bool = False
    sort_by: str = "saved_at"
    order: str = "desc"


def list_page(
    conn: sqlite3.Connection, filters: ArticleFilters, page: int, per_page: int, *, root_url: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if not filters.include_deleted:
        clauses.append("s.deleted_at IS NULL")
    if filters.q is not None:
        clauses.append(
            "(a.title LIKE ? ESCAPE '\\' OR s.author LIKE ? ESCAPE '\\' "
            "OR a.source_domain LIKE ? ESCAPE '\\' OR a.url LIKE ? ESCAPE '\\')"
        )
        args.extend([like_pattern(filters.q)] * 4)
    for column, value in (("a.status", filters.status), ("a.home_status", filters.home_status)):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    if filters.favorite is not None:
        clauses.append("a.favorite = ?")
        args.append(int(filters.favorite))
    if filters.has_highlights is not None:
        exists = (
            "EXISTS (SELECT 1 FROM highlights h WHERE h.source_id = s.id AND h.deleted_at IS NULL)"
        )
        clauses.append(exists if filters.has_highlights else f"NOT {exists}")
    if filters.tag is not None:
        clauses.append(
            "s.id IN (SELECT st.source_id FROM source_tags st JOIN tags t ON t.id = st.tag_id "
            "WHERE t.name_key = ? OR t.id = ?)"
        )
        args.extend([filters.tag.lower()] * 2)
    for column, op, value in (
        ("s.updated_at", ">", filters.updated_since),
        ("a.saved_at", ">=", filters.saved_since),
        ("a.saved_at", "<", filters.saved_before),
    ):
        if value is not None:
            clauses.append(f"{column} {op} ?")
            args.append(value)
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    direction = "ASC" if filters.order == "asc" else "DESC"
    column = SORT_COLUMNS[filters.sort_by]
    # Missing values (no published date, no reading time) sort last in either direction.
    order_by = f"({column} IS NULL), {column} {direction}, a.saved_at {direction}, s.id"
    total = conn.execute(
        f"SELECT count(*) FROM articles a JOIN sources s ON s.id = a.source_id{where}", args
    ).fetchone()[0]
    rows = conn.execute(
        f"{wire.ARTICLE_SELECT}{where} ORDER BY {order_by} LIMIT ? OFFSET ?",
        [*args, per_page, offset(page, per_page)],
    ).fetchall()
    return wire.articles(conn, rows, root_url=root_url), pagination(total, page, per_page)


def _row(conn: sqlite3.Connection, article_id: str) -> sqlite3.Row:
    if not is_uuid(article_id):
        raise NotFound("Article", article_id)
    row = conn.execute(
        f"{wire.ARTICLE_SELECT} WHERE s.id = ? AND s.deleted_at IS NULL", (article_id.lower(),)
    ).fetchone()
    if row is None:
        raise NotFound("Article", article_id)
    return row


def get_summary(conn: sqlite3.Connection, article_id: str, *, root_url: str) -> dict[str, Any]:
    return wire.articles(conn, [_row(conn, article_id)], root_url=root_url)[0]


def chunk(text: str | None, start: int, max_chars: int | None) -> dict[str, Any]:
    """Slice a body by characters with the spec's arithmetic (see store/chunks.py).

    `content_truncated` is true exactly when `content_offset + len(content) < content_length`;
    no chunk ever splits a surrogate pair or carries a lone surrogate.
    """
    piece = slice_content(text, start, max_chars)
    return {
        "content": piece.content,
        "content_length": piece.content_length,
        "content_offset": piece.content_offset,
        "content_truncated": piece.content_truncated,
    }


def get_with_content(
    conn: sqlite3.Connection,
    article_id: str,
    *,
    root_url: str,
    content_format: str = "html",
    start: int = 0,
    max_chars: int | None = None,
    with_highlights: bool = True,
) -> dict[str, Any]:
    """GET /articles/{id}'s answer. Without `with_highlights` the `highlights` field is left
    out (not emptied): the caller asked for the body alone and must not read "none"."""
    row = _row(conn, article_id)
    article = wire.articles(conn, [row], root_url=root_url)[0]
    html, text = row["content_html"], row["content_text"]
    # Serve the asked format; a body that exists only in the other format (a PDF's text) is
    # served as it is, and `content_format` says which one it is.
    if content_format == "text":
        served, body = ("text", text) if text is not None else ("html", html)
    else:
        served, body = ("html", html) if html is not None else ("text", text)
    article.update(
        {
            "content_format": served if body is not None else content_format,
            **chunk(body, start, max_chars),
            "parse_error": row["parse_error"],
            "parse_failure": wire.json_or_none(row["parse_failure"]),
            "pdf_url": row["pdf_url"],
            "epub_url": row["epub_url"],
            "last_fetched_at": row["last_fetched_at"],
            "started_reading_at": row["started_reading_at"],
            "completed_reading_at": row["completed_reading_at"],
            "summary": row["summary"],
            "transcript": wire.json_or_none(row["transcript"]),
        }
    )
    if with_highlights:
        highlight_rows = conn.execute(
            f"{wire.HIGHLIGHT_SELECT} WHERE h.source_id = ? AND h.deleted_at IS NULL "
            "ORDER BY coalesce(h.location, 1e18), h.created_at",
            (row["id"],),
        ).fetchall()
        article["highlights"] = wire.highlights(conn, highlight_rows)
    return article


def tag_saved(conn: sqlite3.Connection, saved: SaveOutcome, entries: list[str]) -> None:
    """POST /articles' tags, added to what was saved (new or duplicate, article or highlight);
    inside the save's transaction."""
    tag_ids = tags.resolve(conn, entries)
    if saved.kind == "highlight":
        conn.executemany(
            "INSERT OR IGNORE INTO highlight_tags(highlight_id, tag_id) VALUES (?, ?)",
            [(saved.id, tag_id) for tag_id in tag_ids],
        )
        if saved.duplicate:
            conn.execute(
                "UPDATE highlights SET updated_at = ? WHERE id = ?", (clock.now(), saved.id)
            )
        return
    conn.executemany(
        "INSERT OR IGNORE INTO source_tags(source_id, tag_id) VALUES (?, ?)",
        [(saved.id, tag_id) for tag_id in tag_ids],
    )
    if saved.duplicate:
        conn.execute("UPDATE sources SET updated_at = ? WHERE id = ?", (clock.now(), saved.id))


def set_tags(conn: sqlite3.Connection, article_id: str, tag_ids: list[str]) -> None:
    conn.execute("DELETE FROM source_tags WHERE source_id = ?", (article_id,))
    conn.executemany(
        "INSERT INTO source_tags(source_id, tag_id) VALUES (?, ?)",
        [(article_id, tag_id) for tag_id in tag_ids],
    )


def update(library: Library, article_id: str, changes: dict[str, Any], *, root_url: str) -> Any:
    with library.write() as conn:
        row = _row(conn, article_id)
        article_columns: dict[str, Any] = {}
        for name in ("home_status", "excerpt"):
            if name in changes:
                article_columns[name] = changes[name]
        if "favorite" in changes:
            article_columns["favorite"] = int(bool(changes["favorite"]))
        source_columns: dict[str, Any] = {"updated_at": clock.now()}
        if "title" in changes:
            article_columns["title"] = changes["title"]
            source_columns["name"] = changes["title"] or row["url"]
        if "note" in changes:
            source_columns["note"] = changes["note"]
        if article_columns:
            assignments = ", ".join(f"{name} = ?" for name in article_columns)
            conn.execute(
                f"UPDATE articles SET {assignments} WHERE source_id = ?",
                [*article_columns.values(), row["id"]],
            )
        assignments = ", ".join(f"{name} = ?" for name in source_columns)
        conn.execute(
            f"UPDATE sources SET {assignments} WHERE id = ?", [*source_columns.values(), row["id"]]
        )
        if "tags" in changes:
            set_tags(conn, row["id"], tags.resolve(conn, changes["tags"]))
        seqs = [
            r[0]
            for r in conn.execute(
                "SELECT seq FROM highlights WHERE source_id = ? AND deleted_at IS NULL",
                (row["id"],),
            )
        ]
    if "title" in changes:
        library.notify_changed(seqs)
    return get_summary(library.connection(), row["id"], root_url=root_url)


def change_tags(
    library: Library, article_id: str, entries: list[str], *, add: bool
) -> list[dict[str, Any]]:
    with library.write() as conn:
        row = _row(conn, article_id)
        if add:
            conn.executemany(
                "INSERT OR IGNORE INTO source_tags(source_id, tag_id) VALUES (?, ?)",
                [(row["id"], tag_id) for tag_id in tags.resolve(conn, entries)],
            )
        else:
            found = [tags.find(conn, entry) for entry in entries]
            conn.executemany(
                "DELETE FROM source_tags WHERE source_id = ? AND tag_id = ?",
                [(row["id"], tag["id"]) for tag in found if tag is not None],
            )
        conn.execute("UPDATE sources SET updated_at = ? WHERE id = ?", (clock.now(), row["id"]))
    return tags.tags_of_sources(library.connection(), [row["id"]])[row["id"]]
