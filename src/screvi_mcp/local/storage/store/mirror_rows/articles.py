"""Articles: the reading-list fields from GET /articles, and each body and detail from
GET /articles/{id}."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from screvi_mcp.local.fetching.urls import normalise_url
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store.mirror_rows.rows import (
    Applied,
    Item,
    ensure_tag,
    insert_row,
    json_or_null,
    live_seqs_of_source,
    set_links,
    soft_delete_source,
    store_page,
    wire_id,
    wire_time,
)


def upsert_articles(
    library: Library, articles: Iterable[Item], *, state: Mapping[str, str | None] | None = None
) -> Applied:
    """Store a page of GET /articles (with include_deleted): the reading-list fields.

    Bodies and the other detail fields come from `store_article_detail`.
    """
    return store_page(library, articles, _upsert_article, state)


def _url_key(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return normalise_url(url)
    except ValueError:
        return url


def _upsert_article(conn: sqlite3.Connection, article: Item, now: str, applied: Applied) -> None:
    article_id = wire_id(article["id"])
    source = conn.execute("SELECT * FROM sources WHERE id = ?", (article_id,)).fetchone()
    updated_at = wire_time(article.get("updated_at")) or now
    if article.get("deleted"):
        if source is not None and source["deleted_at"] is None:
            applied.removed_seqs.extend(soft_delete_source(conn, article_id, updated_at))
            applied.deleted += 1
        else:
            applied.unchanged += 1
        return
    url = str(article.get("url") or "")
    saved_at = wire_time(article.get("saved_at")) or updated_at
    renamed = _article_source(conn, article, source, url, saved_at, updated_at)
    values = _article_values(article, article_id, url, saved_at)
    existing = conn.execute("SELECT * FROM articles WHERE source_id = ?", (article_id,)).fetchone()
    if existing is None:
        insert_row(conn, "articles", {"source_id": article_id, **values})
        applied.created += 1
    else:
        differs = (
            source is None
            or source["updated_at"] != updated_at
            or any(existing[name] != value for name, value in values.items())
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
    tag_ids = [ensure_tag(conn, tag, now) for tag in article.get("tags") or []]
    set_links(conn, "source_tags", "source_id", article_id, tag_ids)
    if renamed:
        applied.changed_seqs.extend(live_seqs_of_source(conn, article_id))


def _article_source(
    conn: sqlite3.Connection,
    article: Item,
    source: sqlite3.Row | None,
    url: str,
    saved_at: str,
    updated_at: str,
) -> bool:
    """Write the source row an article lives in (made if new); whether it was renamed (its
    highlights' searchable text then changes)."""
    article_id = wire_id(article["id"])
    title = article.get("title")
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
    return renamed


def _article_values(article: Item, article_id: str, url: str, saved_at: str) -> dict[str, Any]:
    """The stored reading-list columns of a live article."""
    canonical_url = article.get("canonical_url")
    return {
        "title": article.get("title"),
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
        "published_date": wire_time(article.get("published_date")),
        "parse_state": str(article.get("parse_state") or "queued"),
    }


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
    article_id = wire_id(article_id)
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
                json_or_null(detail.get("parse_failure")),
                detail.get("pdf_url"),
                detail.get("epub_url"),
                wire_time(detail.get("last_fetched_at")),
                wire_time(detail.get("started_reading_at")),
                wire_time(detail.get("completed_reading_at")),
                detail.get("summary"),
                json_or_null(detail.get("transcript")),
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
