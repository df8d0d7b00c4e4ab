"""The /sources endpoints: list, get with a page of highlights, create, update, delete."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, TypedDict, Unpack

from screvi_mcp import contract
from screvi_mcp.client import answers
from screvi_mcp.client import params as p
from screvi_mcp.client.engine import BaseClient
from screvi_mcp.client.marks import reads, writes
from screvi_mcp.client.params import UNSET, Unset
from screvi_mcp.client.results import SourceWithHighlightsPage
from screvi_mcp.models import Page, Source


class SourceFilters(TypedDict, total=False):
    """The filters of GET /sources, declared once."""

    type: contract.SourceListType | None
    search: str | None
    updated_since: datetime | str | None
    include_deleted: bool | None
    include_empty: bool | None
    include_metadata: bool | None


# The spec's bounds on a source's text fields (POST /sources; PATCH takes the same fields).
_LENGTHS = {
    "name": contract.MAX_SOURCE_NAME,
    "author": contract.MAX_AUTHOR,
    "isbn": contract.MAX_BOOK_CODE,
    "asin": contract.MAX_BOOK_CODE,
    "note": contract.MAX_NOTE,
}


def _source_body(**fields: Any) -> dict[str, Any]:
    """The body of a create or an update: lengths checked, unset fields left out."""
    p.check_length({name: (fields.get(name), limit) for name, limit in _LENGTHS.items()})
    metadata = fields.get("metadata")
    if isinstance(metadata, Mapping):
        fields["metadata"] = dict(metadata)
    return p.body(**fields)


class SourcesResource(BaseClient):
    @reads
    async def list_sources(
        self,
        *,
        page: int = 1,
        per_page: int = contract.DEFAULT_PER_PAGE,
        **filters: Unpack[SourceFilters],
    ) -> Page[Source]:
        """GET /sources. Articles without highlights appear only with `include_empty`."""
        query = p.keywords("list_sources", filters, SourceFilters)
        return await self._list_page(
            "sources", Source, page, per_page, query, type=p.SOURCE_LIST_TYPES
        )

    @reads
    async def get_source(
        self,
        source_id: str,
        *,
        page: int = 1,
        per_page: int = contract.DEFAULT_SOURCE_HIGHLIGHTS_PER_PAGE,
        include_metadata: bool | None = None,
    ) -> SourceWithHighlightsPage:
        """GET /sources/{id}: the source and one page of its highlights."""
        p.check_page(page, per_page)
        response = await self._get(
            f"sources/{p.path_id(source_id, 'source')}",
            page=page,
            per_page=per_page,
            include_metadata=include_metadata,
        )
        return answers.whole(response, SourceWithHighlightsPage)

    @writes
    async def create_source(
        self,
        name: str,
        type: contract.CreatableSourceType,
        *,
        author: str | None = None,
        url: str | None = None,
        image_url: str | None = None,
        isbn: str | None = None,
        asin: str | None = None,
        note: str | None = None,
        published_date: date | str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Source:
        """POST /sources. A second `self` source raises `ConflictError` with its `source_id`."""
        p.check_choice("type", type, p.CREATABLE_SOURCE_TYPES, body=True)
        payload = _source_body(
            name=name,
            type=type,
            author=author,
            url=url,
            image_url=image_url,
            isbn=isbn,
            asin=asin,
            note=note,
            published_date=published_date,
            metadata=metadata,
        )
        response = await self._request(
            "POST", "sources", json_body={k: v for k, v in payload.items() if v is not None}
        )
        return answers.model(response, Source)

    @writes
    async def update_source(
        self,
        source_id: str,
        *,
        name: str | Unset = UNSET,
        author: str | Unset | None = UNSET,
        url: str | Unset | None = UNSET,
        image_url: str | Unset | None = UNSET,
        origin: str | Unset | None = UNSET,
        isbn: str | Unset | None = UNSET,
        asin: str | Unset | None = UNSET,
        note: str | Unset | None = UNSET,
        published_date: date | str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
    ) -> Source:
        """PATCH /sources/{id}: only the fields given are sent; `type` cannot change."""
        payload = _source_body(
            name=name,
            author=author,
            url=url,
            image_url=image_url,
            origin=origin,
            isbn=isbn,
            asin=asin,
            note=note,
            published_date=published_date,
            metadata=metadata,
        )
        return await self._update("sources", "source", source_id, payload, Source)

    @writes
    async def delete_source(self, source_id: str, *, cascade: bool = False) -> dict[str, Any]:
        """DELETE /sources/{id}. A source with highlights needs `cascade` (else `ConflictError`)."""
        response = await self._request(
            "DELETE",
            f"sources/{p.path_id(source_id, 'source')}",
            params=p.query(cascade=True) if cascade else None,
        )
        return answers.as_dict(response)
