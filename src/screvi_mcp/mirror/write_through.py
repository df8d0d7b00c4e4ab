"""Writes through a mirror: sent to Screvi first, then the answer is stored in the mirror.

Screvi stays the source of truth: a write the API refuses changes nothing here. A write it
accepts is applied to the mirror from the API's own answer (the item as the server now has
it), so the next read sees it at once without a sync. Where the answer leaves something out
(`metadata` is returned only on request; a saved article's body is fetched later by Screvi),
the caller's own input or the next sync fills it in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread

from screvi_mcp.client.client import ScreviClient
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import mirror_rows as store
from screvi_mcp.models import Article, Highlight, SavedArticle, Source, Tag


class WriteThrough:
    """Applies the answers of the hosted client's writes to the mirror library."""

    def __init__(self, library: Library, hosted: ScreviClient) -> None:
        self.library = library
        self.hosted = hosted

    async def _run(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))

    async def highlights(
        self, items: Sequence[Highlight], metadata: Sequence[Mapping[str, Any] | None] = ()
    ) -> None:
        dumps = []
        for index, item in enumerate(items):
            dump = item.model_dump(mode="json")
            given = metadata[index] if index < len(metadata) else None
            if given is not None:
                dump["metadata"] = dict(given)
            dumps.append(dump)
        await self._run(store.upsert_highlights, self.library, dumps)

    async def highlight_deleted(self, highlight_id: str) -> None:
        tombstone = {"id": highlight_id, "deleted": True, "updated_at": clock.now()}
        await self._run(store.upsert_highlights, self.library, [tombstone])

    async def tags_of(self, kind: str, item_id: str, tags: Sequence[Tag]) -> None:
        dumps = [tag.model_dump(mode="json") for tag in tags]
        await self._run(store.set_item_tags, self.library, kind, item_id, dumps)

    async def source(self, source: Source, metadata: Mapping[str, Any] | None = None) -> None:
        dump = source.model_dump(mode="json")
        if metadata is not None:
            dump["metadata"] = dict(metadata)
        await self._run(store.upsert_sources, self.library, [dump])

    async def source_deleted(self, source_id: str) -> None:
        await self._run(store.upsert_sources, self.library, [{"id": source_id, "deleted": True}])

    async def article(self, article: Article) -> None:
        await self._run(store.upsert_articles, self.library, [article.model_dump(mode="json")])

    async def saved(self, saved: SavedArticle) -> None:
        """POST /articles answered with an id: fetch what it made (one request)."""
        if saved.kind == "highlight":
            await self.highlights([await self.hosted.get_highlight(saved.id)])
            return
        detail = await self.hosted.get_article(saved.id)
        await self.article(detail)

    async def tag(self, tag: Tag) -> None:
        await self._run(store.upsert_tag, self.library, tag.model_dump(mode="json"))

    async def refresh_tags(self) -> None:
        """The full tag list (GET /tags), for the timestamps write answers leave out."""
        tags = [tag.model_dump(mode="json") for tag in await self.hosted.list_tags()]
        await self._run(store.replace_tags, self.library, tags)

    async def tag_deleted(self, tag_id: str) -> None:
        await self._run(store.delete_tag, self.library, tag_id)
