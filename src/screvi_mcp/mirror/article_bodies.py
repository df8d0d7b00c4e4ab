"""A sync's details phase: the detail and whole body of every article the mirror holds an
old version of.

Driven by the library (which versions it has), not by the pages just walked, so a run
killed between an article page and its bodies fetches them on resume. `sync.py` hands it
what it needs of the run (an `ArticleBodies`), nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from screvi_mcp.client.client import ScreviClient
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import mirror_rows as store
from screvi_mcp.mirror.report import Reporter

# A body longer than this is stored cut (a bound on memory and requests per article).
MAX_BODY_CHARS = 20_000_000
# Article ids asked of the library at a time.
_BATCH = 50


@dataclass(frozen=True)
class ArticleBodies:
    library: Library
    client: ScreviClient
    formats: tuple[str, ...]  # each stored, so the mirror answers every format=
    chunk_chars: int  # max_chars of each request
    check_deadline: Callable[[], None]  # raises when the run's time is up

    async def fetch_all(self, reporter: Reporter) -> int:
        """Fetch and store every stale article's detail; returns how many were stored."""
        conn = self.library.connection()
        total = store.count_articles_needing_detail(conn)
        reporter.phase("details", total)
        tried: set[str] = set()
        done = stored = 0
        while True:
            batch = [
                article_id
                for article_id in store.articles_needing_detail(conn, limit=len(tried) + _BATCH)
                if article_id not in tried
            ]
            if not batch:
                return stored
            for article_id in batch:
                self.check_deadline()
                tried.add(article_id)
                stored += await self._fetch_detail(article_id)
                done += 1
                reporter.advance("details", min(done, total), max(total, done))

    async def _fetch_detail(self, article_id: str) -> int:
        from screvi_mcp.client.errors import NotFoundError

        bodies: dict[str, str | None] = {"html": None, "text": None}
        detail: Mapping[str, Any] | None = None
        try:
            for wanted in self.formats:
                first, body = await self._read_body(article_id, wanted)
                if detail is None:
                    detail = first
                served = str(first.get("content_format") or wanted)
                if body is not None and bodies.get(served) is None:
                    bodies[served] = body
        except NotFoundError:
            return 0  # gone since it was listed: its tombstone comes with the next run
        if detail is None:
            return 0
        stored = await anyio.to_thread.run_sync(
            lambda: store.store_article_detail(
                self.library,
                article_id,
                detail,
                content_html=bodies["html"],
                content_text=bodies["text"],
            )
        )
        return 1 if stored else 0

    async def _read_body(self, article_id: str, wanted: str) -> tuple[dict[str, Any], str | None]:
        """One format of an article's body, chunk by chunk (`offset`/`max_chars`)."""
        first: dict[str, Any] | None = None
        parts: list[str] = []
        offset = 0
        length = 0
        while True:
            article = await self.client.get_article(
                article_id,
                format=wanted,  # type: ignore[arg-type]
                offset=offset or None,
                max_chars=self.chunk_chars,
                highlights=False,  # the mirror takes highlights from GET /highlights
            )
            if first is None:
                first = article.model_dump(mode="json")
            if article.content is None:
                return first, None
            parts.append(article.content)
            length += len(article.content)
            offset = article.content_offset + len(article.content)
            if not article.content_truncated or not article.content or length >= MAX_BODY_CHARS:
                return first, "".join(parts)
            self.check_deadline()
