"""GET /search over the embedded library: keyword and semantic rankings fused by RRF.

The route layer parses the query string into a `SearchQuery`, calls `search`, then loads and
renders the highlight rows of the returned seqs in the order given.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

from screvi_mcp.contract import DEFAULT_MIN_RELEVANCE, MAX_SEARCH_PER_PAGE
from screvi_mcp.local.search import concurrent_sides, multilingual
from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.fusion import (
    FusedHit,
    SemanticMatch,
    lead_with_source,
    reciprocal_rank_fusion,
)
from screvi_mcp.local.search.keyword import keyword_ranking
from screvi_mcp.local.search.named_sources import named_source
from screvi_mcp.local.search.query_gate import judge_admits
from screvi_mcp.local.search.query_text import searched_text
from screvi_mcp.local.search.registry import SemanticSide, semantic_index_for
from screvi_mcp.local.storage.library import Library

log = logging.getLogger("screvi_mcp.local.search")

# Each side lists at most this many candidates: the fused list (and so `total`) is bounded,
# and a page deep in the tail of either side says nothing useful anyway.
CANDIDATES_PER_SIDE = 1000
# A query naming a source ("Seneca on wasting time") puts at most this many of that source's
# best matches first, chosen among its best matches for the topic.
NAMED_SOURCE_LEAD = 3
NAMED_SOURCE_CANDIDATES = 10

_warned_keyword_only = False


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
    query = _searched(query)
    conn = library.connection()
    filters = query.filters()
    text = query.q.strip()
    if not text:
        return [], 0
    index = semantic_index_for(library)
    later: list[SemanticMatch] = []
    named: list[SemanticMatch] = []
    if index is None:
        keyword = keyword_ranking(conn, text, filters, CANDIDATES_PER_SIDE)
        semantic = semantic_side(library, query)
    else:
        # The two sides at once: FTS5, onnxruntime and numpy all release the GIL, so on two
        # cores the keyword side hides behind the query embedding and the vector scan. The
        # named-source check (SQL over sources and the FTS index) rides with the keyword side.
        def keyword_and_named() -> tuple[list[int], list[SemanticMatch]]:
            ranked = keyword_ranking(library.connection(), text, filters, CANDIDATES_PER_SIDE)
            return ranked, named_source_side(library, query)

        keyword_side = concurrent_sides.submit(keyword_and_named)
        # The multilingual model's query embedding (an English query in a library holding
        # non-English highlights) is the slowest step of all: start it first, beside MiniLM.
        later_side = (
            concurrent_sides.submit(lambda: multilingual_later(library, query))
            if multilingual.later_applies(library, text)
            else None
        )
        try:
            semantic = semantic_side(library, query)
        finally:
            keyword, named = keyword_side.result()
            if later_side is not None:
                later = later_side.result()
    if keyword and semantic and index is not None and reads_as_unknown_name(index, text):
        # "Vassbotten", "Skerryvore": a name the model has no word for is embedded by its
        # spelling, and its semantic matches are look-alikes (French and Dutch highlights
        # for a Norwegian place name). The keyword side found the name itself, so only
        # semantic matches it also found are kept (docs/search.md, "Ranking", rule 3).
        found = set(keyword)
        semantic = [match for match in semantic if match.seq in found]
    fused = lead_with_source(
        reciprocal_rank_fusion(
            keyword, semantic, later=later, later_offset=multilingual.LATER_OFFSET
        ),
        named,
        NAMED_SOURCE_LEAD,
    )
    verified: dict[int, float] = {}
    if query.verify and index is not None and (semantic or later):
        # Each model's matches are judged by that model's verifier (multilingual.py).
        verified = multilingual.verify(library, conn, text, semantic, later, index.verify)
        fused = [hit for hit in fused if _kept_after_verify(hit, verified, index.verify_threshold)]
    total = len(fused)
    per_page = min(max(query.per_page, 1), MAX_SEARCH_PER_PAGE)
    start = (max(query.page, 1) - 1) * per_page
    page = fused[start : start + per_page]
    # Both rankings already admit only live rows that pass the filters: keyword in its SQL
    # (the search's one liveness check), semantic because only live highlights keep a vector
    # (migration 0012; `filters.py`). Checking the page again would repeat the same query.
    return [_to_hit(hit, verified) for hit in page], total


def semantic_side(library: Library, query: SearchQuery) -> list[SemanticMatch]:
    """The semantic matches search fuses for `query`, best first (empty without an index)."""
    query = _searched(query)
    index = semantic_index_for(library)
    text = query.q.strip()
    if index is None:
        _warn_keyword_only()
        return []
    if not text:
        return []
    min_relevance = min(max(query.min_relevance, 0.0), 1.0)
    # A query in another language than English is ranked by the multilingual model alone
    # (multilingual.py); None when it is English or that model is not installed.
    routed = multilingual.query_ranking(
        library, text, query.filters(), min_relevance, CANDIDATES_PER_SIDE
    )
    if routed is not None:
        return routed
    matches = index.semantic_ranking(
        library.connection(), text, query.filters(), min_relevance, CANDIDATES_PER_SIDE
    )
    # Relevance is decided per query first: if even the best match is weak, the library
    # holds nothing about this query, and the per-hit floor alone would let noise through.
    # Just below the gate the cosine cannot tell, and the judge decides (query_gate.py).
    if not matches:
        return []
    best = matches[0].cosine
    if not index.passes_gate(best, min_relevance) and not judge_admits(
        index, library.connection(), text, matches, min_relevance
    ):
        return []
    # A query with a clear answer keeps only the matches near it: on the labelled set, what
    # scores far below the best is almost never relevant (docs/search.md, "Ranking", rule 3).
    floor = index.near_best_floor(best, min_relevance)
    if floor is not None:
        matches = [match for match in matches if match.cosine >= floor]
    return matches


def _searched(query: SearchQuery) -> SearchQuery:
    """`query` with only the text search ranks by (query_text.py): no frame such as
    "highlights about", no trailing "?", no capitals that say nothing."""
    text = searched_text(query.q)
    return query if text == query.q else dataclasses.replace(query, q=text)


def reads_as_unknown_name(index: SemanticSide, text: str) -> bool:
    """Whether MiniLM ranks `text` and reads it as a name it has no word for. A query the
    multilingual model ranks ("Москва") is left alone: that model reads names in its
    languages, where MiniLM sees only word pieces."""
    # is_unknown_name first: it is a split of the text for all but names-only queries.
    return index.is_unknown_name(text) and not multilingual.routes_to_multilingual(text)


def multilingual_later(library: Library, query: SearchQuery) -> list[SemanticMatch]:
    """An English query's non-English matches, fused after the English ones."""
    query = _searched(query)
    min_relevance = min(max(query.min_relevance, 0.0), 1.0)
    return multilingual.later_matches(library, query.q.strip(), query.filters(), min_relevance)


def named_source_side(library: Library, query: SearchQuery) -> list[SemanticMatch]:
    """For a query naming a source plus a topic: that source's best matches for the topic.

    The question's embedding is mostly about the name, which no highlight text contains, so
    the topic alone is embedded and only that source's highlights are ranked. No gate and
    no floor here: the reader named the source, so its closest highlights are the answer
    even when their cosine is modest; only the best few are put first.
    """
    index = semantic_index_for(library)
    if index is None or query.filters().source:
        return []
    conn = library.connection()
    named = named_source(conn, query.q)
    if named is None:
        return []
    filters = dataclasses.replace(query.filters(), source=named.name_word)
    return index.semantic_ranking(conn, named.topic, filters, 0.0, NAMED_SOURCE_CANDIDATES)


def _kept_after_verify(hit: FusedHit, verified: dict[int, float], threshold: float) -> bool:
    if hit.keyword_rank is not None:
        return True  # keyword matches are always kept (spec)
    probability = verified.get(hit.seq)
    # Only matches the verifier judged off-topic are dropped (spec); those beyond the judged
    # best VERIFY_LIMIT stay, unjudged, rather than cost recall.
    return probability is None or probability >= threshold


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


def _warn_keyword_only() -> None:
    global _warned_keyword_only
    if not _warned_keyword_only:
        _warned_keyword_only = True
        # Attaching already said why at WARNING (missing extra, or a model change); this
        # only marks where it bites, for whoever is debugging.
        log.debug("search is keyword-only: no semantic index is attached to this library")
