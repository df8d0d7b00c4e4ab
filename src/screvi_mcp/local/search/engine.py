"""GET /search over the embedded library, as one pipeline:

candidates (candidates.py: keyword, semantic and named-source lists, each semantic match
scored on one similarity scale by calibration.py and cut at min_relevance) -> fusion
(fusion.py: reciprocal rank fusion, the named source first) -> verify (here, with
`verify=true`: the judges annotate, the order stays the ranking's) -> the page.

The route layer parses the query string into a `SearchQuery`, calls `search`, then loads and
renders the highlight rows of the returned seqs in the order given.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from screvi_mcp.contract import DEFAULT_MIN_RELEVANCE, MAX_SEARCH_PER_PAGE
from screvi_mcp.local.search import candidates, multilingual
from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.fusion import FusedHit, lead_with_source, reciprocal_rank_fusion
from screvi_mcp.local.search.query_text import searched_text
from screvi_mcp.local.search.registry import semantic_index_for
from screvi_mcp.local.storage.library import Library

# A query naming a source ("Seneca on wasting time") puts at most this many of that source's
# best matches first, chosen among its best matches for the topic.
NAMED_SOURCE_LEAD = 3


@dataclass(frozen=True)
class SearchQuery:
    q: str
    source: str | None = None  # partial, case-insensitive match on source name or author
    tag: str | None = None  # tag name, case-insensitive (or tag id)
    types: list[str] | None = None  # source types; 'video' also matches legacy 'youtube'
    favorite: bool | None = None
    min_relevance: float = DEFAULT_MIN_RELEVANCE
    verify: bool = False
    page: int = 1
    per_page: int = 20

    def filters(self) -> Filters:
        types = tuple(t for t in (self.types or []) if t.strip()) or None
        return Filters(self.source, self.tag, types, self.favorite)


@dataclass(frozen=True)
class SearchHit:
    seq: int  # highlights.seq
    similarity: float | None  # calibrated cosine (docs/search.md); None for keyword-only
    match_type: str  # "semantic" | "keyword" | "both"
    relevance: float  # fused RRF score, comparable only within one search
    verified_relevance: float | None
    cosine: float | None = None  # the embedding model's raw cosine, for diagnostics


def search(library: Library, query: SearchQuery) -> tuple[list[SearchHit], int]:
    """The requested page of fused hits and the total number of hits."""
    query = searched(query)
    text = query.q.strip()
    if not text:
        return [], 0
    min_relevance = min(max(query.min_relevance, 0.0), 1.0)
    found = candidates.gather(library, text, query.filters(), min_relevance)
    fused = lead_with_source(
        reciprocal_rank_fusion(
            found.keyword, found.semantic, later=found.later, later_places=found.later_places
        ),
        found.named,
        NAMED_SOURCE_LEAD,
        min_relevance,
    )
    verified: dict[int, float] = {}
    index = semantic_index_for(library)
    if query.verify and index is not None and (found.semantic or found.later):
        # Each model's matches are judged by that model's verifier (multilingual.py). The
        # judges only annotate: dropping what they doubt cost more answers than it emptied
        # negatives, and re-ordering by them lost 2.4% of the plain top 3's answers on the
        # tuning half, over the 2% every rule must keep (docs/search.md, "verify=true").
        conn = library.connection()
        semantic, later = found.semantic, found.later
        verified = multilingual.verify(library, conn, text, semantic, later, index.verify)
    total = len(fused)
    per_page = min(max(query.per_page, 1), MAX_SEARCH_PER_PAGE)
    start = (max(query.page, 1) - 1) * per_page
    page = fused[start : start + per_page]
    # Both rankings already admit only live rows that pass the filters: keyword in its SQL
    # (the search's one liveness check), semantic because only live highlights keep a vector
    # (migration 0012; `filters.py`). Checking the page again would repeat the same query.
    return [_to_hit(hit, verified) for hit in page], total


def searched(query: SearchQuery) -> SearchQuery:
    """`query` with only the text search ranks by (query_text.py): no frame such as
    "highlights about", no trailing "?", no capitals that say nothing."""
    text = searched_text(query.q)
    return query if text == query.q else dataclasses.replace(query, q=text)


def _to_hit(hit: FusedHit, verified: dict[int, float]) -> SearchHit:
    semantic = hit.semantic
    return SearchHit(
        seq=hit.seq,
        similarity=round(semantic.similarity, 4) if semantic else None,
        match_type=hit.match_type,
        relevance=round(hit.relevance, 6),
        verified_relevance=round(verified[hit.seq], 4) if hit.seq in verified else None,
        cosine=round(semantic.cosine, 4) if semantic else None,
    )
