"""The SQL of saving and fetching articles. Every function runs inside the caller's transaction.

An article is a `sources` row (type 'article' or 'pdf'; `name` mirrors the title, or the URL
while there is no title) plus an `articles` row keyed by the same id. A social post is a
highlight of a `tweet` source, one source per author.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from screvi_mcp.contract import MAX_AUTHOR, MAX_SOURCE_NAME
from screvi_mcp.local.fetching.extract import ExtractedArticle
from screvi_mcp.local.fetching.social import SocialPost
from screvi_mcp.local.fetching.urls import host_of, normalise_url, same_site
from screvi_mcp.local.storage import clock


@dataclass(frozen=True, slots=True)
class Claim:
    """An article row this process moved to `fetching` and now owns."""

    article_id: str
    url: str
    attempt: int  # 1 for the first try
    owner: str  # the claiming worker's token; every write of the result checks it


def find_duplicate(conn: sqlite3.Connection, keys: list[str]) -> tuple[str, str] | None:
    """(id, parse_state) of the oldest live article whose URL or canonical URL has a key."""
    wanted = [key for key in dict.fromkeys(keys) if key]
    if not wanted:
        return None
    marks = ", ".join("?" for _ in wanted)
    row = conn.execute(
        "SELECT a.source_id, a.parse_state FROM articles a JOIN sources s ON s.id = a.source_id "
        f"WHERE s.deleted_at IS NULL AND (a.url_key IN ({marks}) OR a.canonical_key IN ({marks})) "
        "ORDER BY a.saved_at LIMIT 1",
        [*wanted, *wanted],
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def retry_failed(conn: sqlite3.Connection, article_id: str) -> bool:
    """Queue a `failed` article again, with a fresh set of attempts: saving its URL again is
    how a user retries (after allowing private addresses, or once the site is back)."""
    return (
        conn.execute(
            "UPDATE articles SET parse_state = 'queued', parse_error = NULL, parse_failure = NULL, "
            "next_attempt_at = NULL, fetch_attempts = 0 "
            "WHERE source_id = ? AND parse_state = 'failed'",
            (article_id,),
        ).rowcount
        == 1
    )


def insert_article(
    conn: sqlite3.Connection, url: str, url_key: str, *, is_pdf: bool = False
) -> str:
    """A new article waiting for the fetcher (parse_state 'queued'); returns its id."""
    article_id = str(uuid.uuid4())
    now = clock.now()
    conn.execute(
        "INSERT INTO sources(id, name, type, url, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (article_id, url, "pdf" if is_pdf else "article", url, now, now),
    )
    conn.execute(
        "INSERT INTO articles(source_id, url, url_key, saved_at, parse_state, source_domain, "
        "pdf_url) VALUES (?, ?, ?, ?, 'queued', ?, ?)",
        (article_id, url, url_key, now, host_of(url) or None, url if is_pdf else None),
    )
    return article_id


def find_social_highlight(
    conn: sqlite3.Connection, platform: str, post_id: str, host: str
) -> tuple[str, str] | None:
    """(highlight id, source id) of a live highlight already made from this post.

    Mastodon status ids are per server, so there the server's host is part of the identity.
    """
    sql = (
        "SELECT h.id, h.source_id FROM highlights h JOIN sources s ON s.id = h.source_id "
        "WHERE h.deleted_at IS NULL AND s.deleted_at IS NULL AND s.type = 'tweet' "
        "AND json_extract(h.metadata, '$.social_platform') = ? "
        "AND json_extract(h.metadata, '$.social_post_id') = ?"
    )
    args: list[str] = [platform, post_id]
    if platform == "mastodon":
        sql += " AND json_extract(h.metadata, '$.social_host') = ?"
        args.append(host)
    row = conn.execute(sql + " ORDER BY h.created_at LIMIT 1", args).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def tweet_source_for(conn: sqlite3.Connection, post: SocialPost) -> str:
    """The live `tweet` source of the post's author, created when there is none yet."""
    row = conn.execute(
        "SELECT id FROM sources WHERE type = 'tweet' AND deleted_at IS NULL "
        "AND lower(author) = lower(?) AND coalesce(origin, '') = ? ORDER BY created_at LIMIT 1",
        (post.author_handle, post.ref.platform),
    ).fetchone()
    if row is not None:
        return str(row[0])
    source_id = str(uuid.uuid4())
    now = clock.now()
    conn.execute(
        "INSERT INTO sources(id, name, type, author, image_url, url, origin, metadata, "
        "created_at, updated_at) VALUES (?, ?, 'tweet', ?, ?, ?, ?, ?, ?, ?)",
        (
            source_id,
            post.source_name[:MAX_SOURCE_NAME],
            post.author_handle[:MAX_AUTHOR],
            post.avatar_url,
            post.author_url,
            post.ref.platform,
            json.dumps({"social_platform": post.ref.platform}),
            now,
            now,
        ),
    )
    return source_id


def insert_social_highlight(
    conn: sqlite3.Connection, source_id: str, post: SocialPost
) -> tuple[str, int]:
    """A highlight holding the post's text; (id, seq)."""
    highlight_id = str(uuid.uuid4())
    now = clock.now()
    metadata = {
        "social_platform": post.ref.platform,
        "social_post_id": post.ref.post_id,
        "social_host": post.ref.host,
        "author_handle": post.author_handle,
        "saved_from": post.ref.url,
    }
    cursor = conn.execute(
        "INSERT INTO highlights(id, source_id, content, url, date, metadata, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            highlight_id,
            source_id,
            post.text,
            post.url,
            post.posted_at,
            json.dumps(metadata),
            now,
            now,
        ),
    )
    conn.execute("UPDATE sources SET updated_at = ? WHERE id = ?", (now, source_id))
    assert cursor.lastrowid is not None
    return highlight_id, cursor.lastrowid


# A `fetching` row is abandoned when its claim's lease ran out (its worker died or hung) or
# when it has no lease at all (left by a version before leases).
_ABANDONED = "parse_state = 'fetching' AND (claim_expires_at IS NULL OR claim_expires_at <= ?)"


def lease_until(seconds: float, now: datetime) -> str:
    """The expiry of a lease taken at `now` for `seconds`."""
    return clock.format_timestamp(now + timedelta(seconds=seconds))


def reset_interrupted(
    conn: sqlite3.Connection, max_attempts: int, now: datetime
) -> tuple[int, int]:
    """Abandoned `fetching` rows: back to `queued`, or `failed` once out of attempts.

    A row whose claim is still live belongs to a worker at work (maybe in another process)
    and is left alone. Returns (requeued, failed). Counting the interrupted try as an attempt
    stops a page that crashes the process from crashing it forever. `now` is the worker's
    clock's (leases run out on it).
    """
    stamp = clock.format_timestamp(now)
    failure = json.dumps(
        {"reason": "interrupted", "message": "processing was interrupted too many times"}
    )
    failed_ids = [
        str(row[0])
        for row in conn.execute(
            f"SELECT source_id FROM articles WHERE {_ABANDONED} AND fetch_attempts >= ?",
            (stamp, max_attempts),
        )
    ]
    for article_id in failed_ids:
        _set_failed(conn, article_id, "Processing was interrupted too many times", failure, stamp)
    requeued = conn.execute(
        "UPDATE articles SET parse_state = 'queued', next_attempt_at = NULL, claim_owner = NULL, "
        f"claim_expires_at = NULL WHERE {_ABANDONED}",
        (stamp,),
    ).rowcount
    return requeued, len(failed_ids)


def claim_next(
    conn: sqlite3.Connection, owner: str, lease_seconds: float, now: datetime
) -> Claim | None:
    """Move the next due queued article to `fetching` under `owner`'s lease and return it
    (None when none is due)."""
    row = conn.execute(
        "UPDATE articles SET parse_state = 'fetching', fetch_attempts = fetch_attempts + 1, "
        "next_attempt_at = NULL, claim_owner = ?, claim_expires_at = ? WHERE source_id = ("
        "  SELECT a.source_id FROM articles a JOIN sources s ON s.id = a.source_id"
        "   WHERE a.parse_state = 'queued' AND s.deleted_at IS NULL"
        "     AND (a.next_attempt_at IS NULL OR a.next_attempt_at <= ?)"
        "   ORDER BY coalesce(a.next_attempt_at, a.saved_at), a.saved_at LIMIT 1"
        ") RETURNING source_id, url, fetch_attempts",
        (owner, lease_until(lease_seconds, now), clock.format_timestamp(now)),
    ).fetchone()
    if row is None:
        return None
    return Claim(str(row[0]), str(row[1]), int(row[2]), owner)


def claim_article(
    conn: sqlite3.Connection, article_id: str, owner: str, lease_seconds: float
) -> Claim | None:
    """Claim one given queued article (tools that write a parsed body without the worker, on
    the wall clock)."""
    row = conn.execute(
        "UPDATE articles SET parse_state = 'fetching', fetch_attempts = fetch_attempts + 1, "
        "next_attempt_at = NULL, claim_owner = ?, claim_expires_at = ? "
        "WHERE source_id = ? AND parse_state = 'queued' RETURNING source_id, url, fetch_attempts",
        (owner, lease_until(lease_seconds, clock.SYSTEM_CLOCK.now()), article_id),
    ).fetchone()
    return None if row is None else Claim(str(row[0]), str(row[1]), int(row[2]), owner)


def renew(conn: sqlite3.Connection, claim: Claim, lease_seconds: float, now: datetime) -> bool:
    """Extend a live claim's lease from `now`; False when the claim is no longer this owner's."""
    return (
        conn.execute(
            "UPDATE articles SET claim_expires_at = ? "
            "WHERE source_id = ? AND parse_state = 'fetching' AND claim_owner = ?",
            (lease_until(lease_seconds, now), claim.article_id, claim.owner),
        ).rowcount
        == 1
    )


def holds(conn: sqlite3.Connection, claim: Claim) -> bool:
    """Whether `claim` still owns its row (checked inside the transaction that writes it)."""
    row = conn.execute(
        "SELECT 1 FROM articles WHERE source_id = ? AND parse_state = 'fetching' "
        "AND claim_owner = ?",
        (claim.article_id, claim.owner),
    ).fetchone()
    return row is not None


def next_due_at(conn: sqlite3.Connection) -> str | None:
    """When the earliest retry waiting in `queued` becomes due (None when none waits)."""
    row = conn.execute(
        "SELECT min(a.next_attempt_at) FROM articles a JOIN sources s ON s.id = a.source_id "
        "WHERE a.parse_state = 'queued' AND s.deleted_at IS NULL"
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def release(conn: sqlite3.Connection, article_id: str, owner: str) -> None:
    """Hand a claimed row back untouched (shutdown): it does not count as an attempt."""
    conn.execute(
        "UPDATE articles SET parse_state = 'queued', fetch_attempts = max(fetch_attempts - 1, 0), "
        "claim_owner = NULL, claim_expires_at = NULL "
        "WHERE source_id = ? AND parse_state = 'fetching' AND claim_owner = ?",
        (article_id, owner),
    )


def requeue(
    conn: sqlite3.Connection, claim: Claim, due_at: str, message: str, failure: dict[str, Any]
) -> None:
    """Back to `queued` after a transient failure, due again at `due_at`."""
    conn.execute(
        "UPDATE articles SET parse_state = 'queued', next_attempt_at = ?, parse_error = ?, "
        "parse_failure = ?, last_fetched_at = ?, claim_owner = NULL, claim_expires_at = NULL "
        "WHERE source_id = ? AND parse_state = 'fetching' AND claim_owner = ?",
        (due_at, message, json.dumps(failure), clock.now(), claim.article_id, claim.owner),
    )


def _set_failed(
    conn: sqlite3.Connection, article_id: str, message: str, failure_json: str, now: str
) -> None:
    conn.execute(
        "UPDATE articles SET parse_state = 'failed', parse_error = ?, parse_failure = ?, "
        "last_fetched_at = ?, next_attempt_at = NULL, claim_owner = NULL, "
        "claim_expires_at = NULL WHERE source_id = ?",
        (message, failure_json, now, article_id),
    )
    conn.execute("UPDATE sources SET updated_at = ? WHERE id = ?", (now, article_id))


def store_failed(
    conn: sqlite3.Connection, claim: Claim, message: str, failure: dict[str, Any]
) -> None:
    if holds(conn, claim):
        _set_failed(conn, claim.article_id, message, json.dumps(failure), clock.now())


def _canonical(declared: str | None, final_url: str, url_key: str) -> tuple[str | None, str | None]:
    """The canonical URL an article is also recognised by, and its key (or None, None)."""
    canonical_url = declared
    if canonical_url is not None and not same_site(canonical_url, final_url):
        # A page may only speak for addresses of its own site: otherwise any page could
        # declare someone else's URL canonical and capture later saves of it as duplicates.
        canonical_url = None
    if canonical_url is None:
        # A page without a canonical link that redirected elsewhere: the final URL is what a
        # later save of that address should be recognised by.
        try:
            if normalise_url(final_url) != url_key:
                canonical_url = final_url
        except ValueError:
            canonical_url = None
    if canonical_url is None:
        return None, None
    try:
        return canonical_url, normalise_url(canonical_url)
    except ValueError:
        return None, None


def store_parsed(
    conn: sqlite3.Connection,
    claim: Claim,
    article: ExtractedArticle,
    *,
    final_url: str,
) -> list[int]:
    """Write an extracted article; returns the seqs of its highlights (their source renamed).

    Fields a user can edit (title, excerpt) and source fields they may have set (author,
    cover) are only filled when still empty. `name` follows the title, the spec's rule.
    Nothing is written when the claim was lost (its lease ran out and another worker took it).
    """
    if not holds(conn, claim):
        return []
    article_id = claim.article_id
    now = clock.now()
    row = conn.execute("SELECT url_key FROM articles WHERE source_id = ?", (article_id,)).fetchone()
    if row is None:
        return []
    canonical_url, canonical_key = _canonical(article.canonical_url, final_url, row[0])
    conn.execute(
        "UPDATE articles SET parse_state = 'parsed', parse_error = NULL, parse_failure = NULL, "
        "content_html = ?, content_text = ?, title = coalesce(title, ?), "
        "excerpt = coalesce(excerpt, ?), canonical_url = ?, canonical_key = ?, word_count = ?, "
        "reading_time_minutes = ?, source_domain = coalesce(?, source_domain), site_name = ?, "
        "language = ?, published_date = coalesce(published_date, ?), "
        "pdf_url = coalesce(?, pdf_url), last_fetched_at = ?, next_attempt_at = NULL, "
        "claim_owner = NULL, claim_expires_at = NULL WHERE source_id = ?",
        (
            article.content_html,
            article.content_text,
            article.title,
            article.excerpt,
            canonical_url,
            canonical_key,
            article.word_count,
            article.reading_time_minutes,
            article.source_domain,
            article.site_name,
            article.language,
            article.published_date,
            article.pdf_url,
            now,
            article_id,
        ),
    )
    return _fill_source(conn, article_id, article, now)


def _fill_source(
    conn: sqlite3.Connection, article_id: str, article: ExtractedArticle, now: str
) -> list[int]:
    """The article's source takes its title as name and fills what is still empty; the seqs
    of its live highlights when its name or author changed (their searchable text did)."""
    before = conn.execute("SELECT name, author FROM sources WHERE id = ?", (article_id,)).fetchone()
    conn.execute(
        "UPDATE sources SET "
        "name = coalesce((SELECT title FROM articles WHERE source_id = ?), name), "
        "author = coalesce(author, ?), image_url = coalesce(image_url, ?), "
        "type = CASE WHEN ? THEN 'pdf' ELSE type END, updated_at = ? WHERE id = ?",
        (
            article_id,
            article.author,
            article.image_url,
            article.pdf_url is not None,
            now,
            article_id,
        ),
    )
    after = conn.execute("SELECT name, author FROM sources WHERE id = ?", (article_id,)).fetchone()
    if before is None or after is None or tuple(before) == tuple(after):
        return []
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT seq FROM highlights WHERE source_id = ? AND deleted_at IS NULL", (article_id,)
        )
    ]
