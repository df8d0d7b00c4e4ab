"""The /highlights endpoints: list, random, get, create (one or bulk), update, delete, tag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypedDict, Unpack

from pydantic import TypeAdapter

from screvi_mcp import contract
from screvi_mcp.client import answers
from screvi_mcp.client import params as p
from screvi_mcp.client.engine import BaseClient
from screvi_mcp.client.errors import PayloadTooLargeError
from screvi_mcp.client.inputs import NewHighlight, new_highlight
from screvi_mcp.client.marks import reads, writes
from screvi_mcp.client.params import UNSET, Unset
from screvi_mcp.models import Highlight, Page, Tag

_HIGHLIGHT_LIST = TypeAdapter(list[Highlight])


class HighlightFilters(TypedDict, total=False):
    """The filters of GET /highlights, declared once for every method that takes them."""

    source_id: str | None
    favorite: bool | None
    tag_id: str | None
    tag: str | None
    updated_since: datetime | str | None
    include_deleted: bool | None


class HighlightsResource(BaseClient):
    @reads
    async def list_highlights(
        self,
        *,
        page: int = 1,
        per_page: int = contract.DEFAULT_PER_PAGE,
        include_metadata: bool | None = None,
        **filters: Unpack[HighlightFilters],
    ) -> Page[Highlight]:
        """GET /highlights: most recent first; tombstones only with `include_deleted`."""
        p.check_page(page, per_page)
        response = await self._get(
            "highlights",
            page=page,
            per_page=per_page,
            **p.keywords("list_highlights", filters, HighlightFilters),
            include_metadata=include_metadata,
        )
        return answers.page(response, Highlight)

    @reads
    async def get_random_highlights(
        self,
        *,
        count: int | None = None,
        favorite: bool | None = None,
        types: str | Sequence[str] | None = None,
        tag: str | None = None,
        source_id: str | None = None,
    ) -> list[Highlight]:
        """GET /highlights/random. Always a list: one highlight unless `count` (max 20) is given.

        Raises `NotFoundError` when no highlight matches.
        """
        p.check_range("count", count, low=1, high=contract.MAX_RANDOM_COUNT)
        response = await self._get(
            "highlights/random",
            count=count,
            favorite=favorite,
            types=p.check_types(types),
            tag=tag,
            source_id=source_id,
        )
        data = answers.data_of(response)
        if isinstance(data, list):
            return answers.validate(response, lambda: _HIGHLIGHT_LIST.validate_python(data))
        return [answers.validate(response, lambda: Highlight.model_validate(data))]

    @reads
    async def get_highlight(
        self, highlight_id: str, *, include_metadata: bool | None = None
    ) -> Highlight:
        """GET /highlights/{id}."""
        response = await self._get(
            f"highlights/{p.path_id(highlight_id, 'highlight')}",
            include_metadata=include_metadata,
        )
        return answers.model(response, Highlight)

    @writes
    async def create_highlight(
        self,
        content: str,
        *,
        note: str | None = None,
        favorite: bool | None = None,
        url: str | None = None,
        location: int | None = None,
        date: datetime | str | None = None,
        source_id: str | None = None,
        article_id: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Highlight:
        """POST /highlights. Without `source_id` and `article_id` the highlight is standalone."""
        fields = {
            "content": content,
            "note": note,
            "favorite": favorite,
            "url": url,
            "location": location,
            "date": date,
            "source_id": source_id,
            "article_id": article_id,
            "tags": p.check_tags(tags),
            "metadata": dict(metadata) if metadata is not None else None,
        }
        item = new_highlight({k: v for k, v in fields.items() if v is not None})
        response = await self._request("POST", "highlights", json_body=item.to_body())
        return answers.model(response, Highlight)

    @writes
    async def create_highlights_bulk(
        self, highlights: Sequence[NewHighlight | Mapping[str, Any]]
    ) -> list[Highlight]:
        """POST /highlights/bulk: up to 100, all or nothing, one request of the rate budget."""
        if len(highlights) > contract.MAX_BULK:
            raise PayloadTooLargeError(
                f"at most {contract.MAX_BULK} highlights per bulk request, got {len(highlights)}",
                status=413,
                from_server=False,
            )
        items = [
            new_highlight(
                item if isinstance(item, NewHighlight) else dict(item),
                prefix=f"highlights[{index}].",
            )
            for index, item in enumerate(highlights)
        ]
        response = await self._request(
            "POST", "highlights/bulk", json_body={"highlights": [i.to_body() for i in items]}
        )
        return answers.listed(response, _HIGHLIGHT_LIST, "highlights")

    @writes
    async def update_highlight(
        self,
        highlight_id: str,
        *,
        content: str | Unset = UNSET,
        note: str | Unset | None = UNSET,
        favorite: bool | Unset = UNSET,
        url: str | Unset | None = UNSET,
        location: int | Unset | None = UNSET,
        date: datetime | str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
        tags: Sequence[str] | Unset = UNSET,
    ) -> Highlight:
        """PATCH /highlights/{id}: only the fields given are sent; `None` clears a field.

        `tags` replaces the whole set (`[]` removes all).
        """
        if not isinstance(location, Unset):
            p.check_range("location", location, low=0)
        payload = p.body(
            content=content,
            note=note,
            favorite=favorite,
            url=url,
            location=location,
            date=date,
            metadata=dict(metadata) if isinstance(metadata, Mapping) else metadata,
            tags=UNSET if isinstance(tags, Unset) else p.check_tags(tags),
        )
        return await self._update("highlights", "highlight", highlight_id, payload, Highlight)

    @writes
    async def delete_highlight(self, highlight_id: str) -> dict[str, Any]:
        """DELETE /highlights/{id}: soft, idempotent. Returns the server's answer as is."""
        response = await self._request(
            "DELETE", f"highlights/{p.path_id(highlight_id, 'highlight')}"
        )
        return answers.as_dict(response)

    @writes
    async def add_highlight_tags(self, highlight_id: str, tags: Sequence[str]) -> list[Tag]:
        """POST /highlights/{id}/tags. Returns the highlight's full tag list afterwards."""
        return await self._change_tags("POST", "highlights", "highlight", highlight_id, tags)

    @writes
    async def remove_highlight_tags(self, highlight_id: str, tags: Sequence[str]) -> list[Tag]:
        """DELETE /highlights/{id}/tags. Returns the highlight's full tag list afterwards."""
        return await self._change_tags("DELETE", "highlights", "highlight", highlight_id, tags)
