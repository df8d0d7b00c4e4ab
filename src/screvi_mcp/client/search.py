"""The /search endpoint: hybrid semantic and keyword search over highlights."""

from __future__ import annotations

from collections.abc import Sequence

from screvi_mcp import contract
from screvi_mcp.client import answers
from screvi_mcp.client import params as p
from screvi_mcp.client.engine import BaseClient
from screvi_mcp.client.errors import InvalidParameterError
from screvi_mcp.client.marks import reads
from screvi_mcp.models import (
    EMBEDDING_BACKLOG_HEADER,
    KEYWORD_ONLY_HEADER,
    SearchPage,
    SearchResult,
)


class SearchResource(BaseClient):
    @reads
    async def search(
        self,
        q: str,
        *,
        source: str | None = None,
        tag: str | None = None,
        types: str | Sequence[str] | None = None,
        favorite: bool | None = None,
        min_relevance: float | None = None,
        verify: bool | None = None,
        page: int = 1,
        per_page: int = contract.DEFAULT_PER_PAGE,
    ) -> SearchPage:
        """GET /search: hybrid semantic and keyword search over highlights (per_page max 50).

        `keyword_only_reason` is set when the API says it matched keywords only (the
        embedded library's extension header)."""
        if not isinstance(q, str) or not q.strip():
            raise InvalidParameterError(
                "q is required", status=400, fields={"q": "required"}, from_server=False
            )
        if len(q) > contract.MAX_QUERY_CHARS:
            reason = f"at most {contract.MAX_QUERY_CHARS} characters"
            raise InvalidParameterError(
                f"q must be {reason}", status=400, fields={"q": reason}, from_server=False
            )
        p.check_range("min_relevance", min_relevance, low=0, high=1)
        p.check_page(page, per_page, contract.MAX_SEARCH_PER_PAGE)
        response = await self._get(
            "search",
            q=q,
            source=source,
            tag=tag,
            types=p.check_types(types),
            favorite=favorite,
            min_relevance=min_relevance,
            verify=verify,
            page=page,
            per_page=per_page,
        )
        found = answers.page(response, SearchResult)
        reason = response.headers.get(KEYWORD_ONLY_HEADER)
        pending, lag = _backlog(response.headers.get(EMBEDDING_BACKLOG_HEADER, ""))
        return SearchPage(
            data=found.data,
            pagination=found.pagination,
            keyword_only_reason=reason,
            embedding_pending=pending,
            embedding_lag_seconds=lag,
        )


def _backlog(header: str) -> tuple[int | None, float | None]:
    """`pending=N; lag=S` (lag optional); (None, None) when absent or unreadable."""
    fields = dict(part.strip().partition("=")[::2] for part in header.split(";") if "=" in part)
    try:
        pending = int(fields["pending"])
        lag = float(fields["lag"]) if "lag" in fields else None
    except (KeyError, ValueError):
        return None, None
    return pending, lag
