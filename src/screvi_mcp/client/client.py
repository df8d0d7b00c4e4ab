"""`ScreviClient`: one async method per endpoint of the Screvi public API.

The client speaks HTTP through whatever transport it was given: httpx's own network pool for
the hosted API, or any `httpx.AsyncBaseTransport` (such as the embedded library's in-process
one, which `screvi_mcp.local.api.seam` hands out). It never knows which backend it talks to.

It is built the way the OpenAI and Anthropic SDKs are: an engine (`engine.BaseClient`: the
key, rate limit, deadline, retries, bounded reads, errors) and one module per resource of
the API (`highlights`, `search`, `sources`, `articles`, `tags`, `skill`), each marking its
methods as reads or writes (`marks.py`). The methods stay on the client itself
(`client.list_highlights(...)`), as callers have always used them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from screvi_mcp.client.articles import ArticlesResource
from screvi_mcp.client.auth import mask_key
from screvi_mcp.client.engine import DEFAULT_BASE_URL, DEFAULT_TIMEOUT, MAX_RESPONSE_BYTES
from screvi_mcp.client.highlights import HighlightsResource
from screvi_mcp.client.in_process import Borrowed
from screvi_mcp.client.search import SearchResource
from screvi_mcp.client.skill import SkillResource
from screvi_mcp.client.sources import SourcesResource
from screvi_mcp.client.tags import TagsResource
from screvi_mcp.models import Page

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "MAX_RESPONSE_BYTES", "ScreviClient", "mask_key"]

ItemT = TypeVar("ItemT", bound=BaseModel)


class ScreviClient(
    HighlightsResource,
    SearchResource,
    SourcesResource,
    ArticlesResource,
    TagsResource,
    SkillResource,
):
    """Async client of the Screvi public API; create one and reuse it for the process's life.

    Build it with `ScreviClient.hosted(api_key)` for the hosted API, or with a key, a
    `base_url` and the `transport` of another backend; use it as `async with client:` (or
    call `await client.aclose()`). Closing the client closes its transport.

    Errors are the classes of `screvi_mcp.client.errors`. Writes with a legacy key (no
    `sk_live_` prefix) fail before sending. Requests are spread under `rate_limit` per
    `rate_window` seconds for every client of the process sharing the key, and retried as
    `retry` allows (see `screvi_mcp.client.retry` for which requests are ever resent).
    """

    @classmethod
    def hosted(
        cls, api_key: str, *, base_url: str = DEFAULT_BASE_URL, **options: Any
    ) -> ScreviClient:
        """A client of the hosted API (or of any server speaking the spec at `base_url`)."""
        return cls(api_key, base_url=base_url, **options)

    def with_api_key(self, api_key: str) -> ScreviClient:
        """A client for the same API that sends another key: one remote caller's own key.

        It borrows this client's transport, so for the embedded library it talks to the app
        this client already runs (no second library, index or worker); for the hosted API it
        reuses this client's connection pool. Closing it leaves that transport open for its
        owner. Its rate limit is the one every client of the process using that key on
        that API shares (an embedded library's own, per copy: `ratelimit.limiter_for`).
        """
        rate_limit, rate_window = self._rate
        return ScreviClient(
            api_key,
            base_url=self.base_url,
            timeout=self._timeout,
            rate_limit=rate_limit,
            rate_window=rate_window,
            max_rate_wait=self._max_rate_wait,
            max_response_bytes=self._max_response_bytes,
            retry=self._retry,
            transport=Borrowed(self._transport),
            bundled_skill_path=self._bundled_skill_path,
        )

    async def iterate(
        self,
        list_method: Callable[..., Awaitable[Page[ItemT]]],
        /,
        *,
        max_items: int | None = 1000,
        per_page: int | None = None,
        **filters: Any,
    ) -> AsyncIterator[ItemT]:
        """Every item of a list endpoint, page after page, stopping after `max_items`.

        `list_method` is one of the `list_*` methods or `search`, with its filters as keyword
        arguments: `client.iterate(client.list_highlights, favorite=True, max_items=200)`.
        `max_items=None` walks everything. An item seen on an earlier page (lists shift when
        items are added while walking) is not yielded twice.
        """
        if max_items is not None and max_items < 0:
            raise ValueError("max_items must not be negative")
        if per_page is not None:
            filters["per_page"] = per_page
        seen: set[str] = set()
        yielded = 0
        page_number = filters.pop("page", 1)
        while max_items is None or yielded < max_items:
            result = await list_method(page=page_number, **filters)
            for item in result.data:
                item_id = getattr(item, "id", None)
                if isinstance(item_id, str):
                    if item_id in seen:
                        continue
                    seen.add(item_id)
                yield item
                yielded += 1
                if max_items is not None and yielded >= max_items:
                    return
            pagination = result.pagination
            if not result.data or not pagination.has_more:
                return
            if pagination.total_pages and page_number >= pagination.total_pages:
                return
            page_number += 1

    paginate = iterate
