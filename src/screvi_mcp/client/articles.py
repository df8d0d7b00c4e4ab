"""The /articles endpoints: list, save, read (in chunks), update, tag."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final, TypedDict, Unpack

from screvi_mcp import contract
from screvi_mcp.client import answers
from screvi_mcp.client import params as p
from screvi_mcp.client.engine import BaseClient
from screvi_mcp.client.errors import InvalidParameterError
from screvi_mcp.client.marks import reads, writes
from screvi_mcp.client.params import UNSET, Unset
from screvi_mcp.contract import HOSTED_BASE_URL
from screvi_mcp.extensions import ARTICLE_SEARCH_MAX_PER_PAGE, ARTICLE_SEARCH_PATH, PassagePage
from screvi_mcp.models import Article, ArticleWithContent, Page, SavedArticle, Tag


class ArticleFilters(TypedDict, total=False):
    """The filters and order of GET /articles, declared once."""

    q: str | None
    status: contract.ArticleStatusName | None
    home_status: contract.HomeStatusName | None
    favorite: bool | None
    has_highlights: bool | None
    tag: str | None
    updated_since: datetime | str | None
    saved_since: datetime | str | None
    saved_before: datetime | str | None
    include_deleted: bool | None
    sort_by: contract.ArticleSortKey | None
    order: contract.SortOrder | None


# Sent when only an article's body is wanted; see contract.OMIT_HIGHLIGHTS_PREFERENCE.
_OMIT_HIGHLIGHTS: Final = {"Prefer": contract.OMIT_HIGHLIGHTS_PREFERENCE}


class ArticlesResource(BaseClient):
    @reads
    async def list_articles(
        self,
        *,
        page: int = 1,
        per_page: int = contract.DEFAULT_PER_PAGE,
        **filters: Unpack[ArticleFilters],
    ) -> Page[Article]:
        """GET /articles: saved articles, newest first unless `sort_by`/`order` say otherwise."""
        return await self._list_page(
            "articles",
            Article,
            page,
            per_page,
            p.keywords("list_articles", filters, ArticleFilters),
            status=p.ARTICLE_STATUSES,
            home_status=p.HOME_STATUSES,
            sort_by=p.ARTICLE_SORT_KEYS,
            order=p.SORT_ORDERS,
        )

    @reads
    async def search_articles(
        self,
        q: str,
        *,
        tag: str | None = None,
        status: contract.ArticleStatusName | None = None,
        favorite: bool | None = None,
        saved_since: datetime | str | None = None,
        saved_before: datetime | str | None = None,
        min_relevance: float | None = None,
        page: int = 1,
        per_page: int = 10,
    ) -> PassagePage:
        """GET /ext/articles/search: passages inside saved articles, best article first.

        An extension of the API (screvi_mcp/extensions.py): only the embedded library and
        mirrors serve it (a mirror answers it from its own copy). Refused here, before any
        request, when this client talks to the hosted API.
        """
        if self.base_url.rstrip("/") == HOSTED_BASE_URL:
            raise InvalidParameterError(
                "passage search is an extension of the embedded library; the hosted API has "
                "no such endpoint (use list_articles with q, or a mirror made by `sync`)",
                status=400,
                from_server=False,
            )
        p.check_page(page, per_page, ARTICLE_SEARCH_MAX_PER_PAGE)
        p.check_choice("status", status, p.ARTICLE_STATUSES)
        p.check_range("min_relevance", min_relevance, low=0, high=1)
        response = await self._get(
            ARTICLE_SEARCH_PATH,
            q=q,
            tag=tag,
            status=status,
            favorite=favorite,
            saved_since=saved_since,
            saved_before=saved_before,
            min_relevance=min_relevance,
            page=page,
            per_page=per_page,
        )
        return answers.whole(response, PassagePage)

    @writes
    async def save_article(self, url: str, *, tags: Sequence[str] | None = None) -> SavedArticle:
        """POST /articles. `duplicate` tells an existing article; `kind == "highlight"` a post."""
        payload: dict[str, Any] = {"url": url}
        checked = p.check_tags(tags)
        if checked is not None:
            payload["tags"] = checked
        response = await self._request("POST", "articles", json_body=payload)
        return answers.model(response, SavedArticle)

    @reads
    async def get_article(
        self,
        article_id: str,
        *,
        format: contract.ContentFormatName | None = None,
        offset: int | None = None,
        max_chars: int | None = None,
        highlights: bool = True,
    ) -> ArticleWithContent:
        """GET /articles/{id} with its body; page long bodies with `offset` and `max_chars`.

        `content` is None until `parse_state` is `parsed` (or for good when `failed`).
        With `highlights=False` (reading the body chunk by chunk) the article's highlights
        are neither asked for nor parsed, and the answer's `highlights` is empty.
        """
        p.check_choice("format", format, p.CONTENT_FORMATS)
        p.check_range("offset", offset, low=0)
        p.check_range("max_chars", max_chars, low=contract.MIN_MAX_CHARS)
        response = await self._request(
            "GET",
            f"articles/{p.path_id(article_id, 'article')}",
            params=p.query(format=format, offset=offset, max_chars=max_chars),
            headers=None if highlights else _OMIT_HIGHLIGHTS,
        )
        if highlights:
            return answers.model(response, ArticleWithContent)

        def body_only() -> ArticleWithContent:
            data = answers.data_of(response)
            if isinstance(data, dict):
                # A server that ignored the preference sent them anyway: skip parsing them.
                data = {name: value for name, value in data.items() if name != "highlights"}
            return ArticleWithContent.model_validate(data)

        return answers.validate(response, body_only)

    @writes
    async def update_article(
        self,
        article_id: str,
        *,
        home_status: contract.HomeStatusName | Unset = UNSET,
        favorite: bool | Unset = UNSET,
        title: str | Unset | None = UNSET,
        excerpt: str | Unset | None = UNSET,
        note: str | Unset | None = UNSET,
        tags: Sequence[str] | Unset = UNSET,
    ) -> Article:
        """PATCH /articles/{id}: only fields given are sent; `None` clears title/excerpt/note."""
        if not isinstance(home_status, Unset):
            p.check_choice("home_status", home_status, p.HOME_STATUSES, body=True)
        p.check_length(
            {
                "title": (title, contract.MAX_ARTICLE_TITLE),
                "excerpt": (excerpt, contract.MAX_EXCERPT),
                "note": (note, contract.MAX_NOTE),
            }
        )
        payload = p.body(
            home_status=home_status,
            favorite=favorite,
            title=title,
            excerpt=excerpt,
            note=note,
            tags=UNSET if isinstance(tags, Unset) else p.check_tags(tags),
        )
        return await self._update("articles", "article", article_id, payload, Article)

    @writes
    async def add_article_tags(self, article_id: str, tags: Sequence[str]) -> list[Tag]:
        """POST /articles/{id}/tags. Returns the article's full tag list afterwards."""
        return await self._change_tags("POST", "articles", "article", article_id, tags)

    @writes
    async def remove_article_tags(self, article_id: str, tags: Sequence[str]) -> list[Tag]:
        """DELETE /articles/{id}/tags. Returns the article's full tag list afterwards."""
        return await self._change_tags("DELETE", "articles", "article", article_id, tags)
