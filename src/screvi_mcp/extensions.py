"""Extensions of the Screvi API that only the embedded library (and so a mirror) serves.

Every such path sits under `ext/`, which the Screvi API spec does not have: a client calls
one only when it knows its backend is not hosted Screvi (the MCP tools fall back to the
spec's own endpoints there). These are their wire facts, shared by client and local service.
"""

from __future__ import annotations

from screvi_mcp.models import Article, MatchType, Page, WireModel

# Error codes beyond the spec's (section 7), both answered only by the embedded library.
# 503: SQLite's lock wait ran out before the write began; nothing was written.
BUSY = "busy"
# 500: the library file is damaged (found mid-run; at start-up the door check refuses it).
# Resending reads the same pages, so the client does not.
LIBRARY_DAMAGED = "library_damaged"

# The largest request body read, in bytes: by the embedded REST API (413 payload_too_large)
# and by the MCP server over HTTP (server/body_limit.py). The largest valid body, a bulk
# create of 100 highlights with content and note at 20,000 characters each, is about 8 MB as
# UTF-8 and up to 24 MB with every character \u-escaped; 32 MiB leaves room for metadata.
MAX_BODY_BYTES = 32 * 1024 * 1024

# GET: passage search inside saved articles (docs/articles.md).
ARTICLE_SEARCH_PATH = "ext/articles/search"
ARTICLE_SEARCH_MAX_PER_PAGE = 50


class Passage(WireModel):
    ordinal: int
    offset: int  # character offset in the article's text body (read_article's `offset`)
    length: int
    text: str


class PassageHit(WireModel):
    article: Article
    passage: Passage
    similarity: float | None = None  # raw cosine of the passage; null for keyword-only
    match_type: MatchType = MatchType.keyword
    relevance: float = 0.0


class PassagePage(Page[PassageHit]):
    semantic: bool = False  # whether meaning was searched (False: keywords only)
    passages_waiting: int = 0  # passages not yet findable by meaning
