"""Wire models of the Screvi public API, shared by the client and the embedded library.

Field names are exactly the spec's (`../shared/spec/screvi-public-api.md`, section 2).
Response models ignore unknown fields so that a newer hosted API never breaks the client;
the embedded library builds them itself and so always emits exactly these fields.
The spec's enums are the Literals of `contract.py`, used here as they are; the two enums the
spec does not list as such (a parse state, a match type) are defined here, once.
Error bodies (`{error, code, fields?}`) have no model here: the embedded library builds them
in `local/api/error_answers.py`, and the client reads them leniently in `client/errors.py`, since a
proxy's error page must not become a second error.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from screvi_mcp.contract import ArticleStatusName, ContentFormatName, HomeStatusName


class ParseState(StrEnum):
    queued = "queued"
    fetching = "fetching"
    parsed = "parsed"
    failed = "failed"


class MatchType(StrEnum):
    semantic = "semantic"
    keyword = "keyword"
    both = "both"


class WireModel(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Tag(WireModel):
    id: str
    name: str
    color: str | None = None


class TagWithCounts(Tag):
    highlight_count: int = 0
    article_count: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None


class HighlightSource(WireModel):
    id: str
    name: str
    type: str
    author: str | None = None
    image_url: str | None = None
    url: str | None = None


class Highlight(WireModel):
    id: str
    content: str = ""
    note: str | None = None
    favorite: bool = False
    url: str | None = None
    location: float | None = None
    date: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    tags: list[Tag] = Field(default_factory=list)
    source: HighlightSource | None = None
    metadata: dict[str, Any] | None = None
    deleted: bool = False


class Source(WireModel):
    id: str
    name: str = ""
    type: str = "custom"
    author: str | None = None
    image_url: str | None = None
    url: str | None = None
    origin: str | None = None
    note: str | None = None
    tags: list[Tag] = Field(default_factory=list)
    highlight_count: int = 0
    created_at: datetime | None = None
    metadata: dict[str, Any] | None = None
    deleted: bool = False


class SourceWithHighlights(Source):
    highlights: list[Highlight] = Field(default_factory=list)


class Pagination(WireModel):
    page: int
    per_page: int
    total: int
    total_pages: int
    has_more: bool


class SearchResult(Highlight):
    similarity: float | None = None
    match_type: MatchType = MatchType.keyword
    relevance: float = 0.0
    verified_relevance: float | None = None


class Article(WireModel):
    id: str
    title: str | None = None
    author: str | None = None
    url: str = ""
    canonical_url: str | None = None
    excerpt: str | None = None
    status: ArticleStatusName = "unread"
    home_status: HomeStatusName = "inbox"
    favorite: bool = False
    progress_percentage: int = 0
    reading_time_minutes: int | None = None
    word_count: int | None = None
    source_domain: str | None = None
    site_name: str | None = None
    language: str | None = None
    saved_at: datetime | None = None
    published_date: datetime | None = None
    updated_at: datetime | None = None
    parse_state: ParseState = ParseState.queued
    note: str | None = None
    deleted: bool = False
    image_url: str | None = None
    screvi_url: str = ""
    highlight_count: int = 0
    tags: list[Tag] = Field(default_factory=list)


class ArticleWithContent(Article):
    content_format: ContentFormatName = "html"
    content: str | None = None
    content_length: int = 0
    content_offset: int = 0
    content_truncated: bool = False
    parse_error: str | None = None
    parse_failure: dict[str, Any] | None = None
    pdf_url: str | None = None
    epub_url: str | None = None
    last_fetched_at: datetime | None = None
    started_reading_at: datetime | None = None
    completed_reading_at: datetime | None = None
    summary: str | None = None
    transcript: dict[str, Any] | None = None
    highlights: list[Highlight] = Field(default_factory=list)


class SavedArticle(WireModel):
    """Answer of POST /articles: an article row, or a highlight made from a social post."""

    id: str
    parse_state: ParseState | None = None
    duplicate: bool = False
    kind: str = "article"
    source_id: str | None = None


ItemT = TypeVar("ItemT", bound=BaseModel)


class Page(WireModel, Generic[ItemT]):
    """One page of a list endpoint: `{data: [...], pagination: {...}}`."""

    data: list[ItemT]
    pagination: Pagination


# An extension header of the embedded library's /search: why it matched keywords only.
KEYWORD_ONLY_HEADER = "X-Screvi-Search-Keyword-Only"
# Another: how many highlights wait for a vector, and about how many seconds until they are
# searchable by meaning (`pending=N; lag=S`), sent when enough wait to matter.
EMBEDDING_BACKLOG_HEADER = "X-Screvi-Embedding-Backlog"


class SearchPage(Page[SearchResult]):
    """A page of search results, and (not a wire field) why search was keyword-only, when
    the API said so: an agent should then change words, not lower min_relevance."""

    keyword_only_reason: str | None = Field(default=None, exclude=True)
    # Highlights not yet searchable by meaning, and the estimated seconds until they are.
    embedding_pending: int | None = Field(default=None, exclude=True)
    embedding_lag_seconds: float | None = Field(default=None, exclude=True)
