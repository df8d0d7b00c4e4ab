"""Search, stage 1: the candidate lists for a query, each scored and cut.

- keyword: highlights holding every word of the query (keyword.py), by bm25;
- semantic: the English model's matches (index.py), or the multilingual model's for a
  query in another language (multilingual.py);
- later: an English query's non-English matches, by the multilingual model (with a tenth
  of the English model's cosine), each with its place in fusion (multilingual.later_places);
- named: for a query naming a source or author, that source's matches for the rest of it
  (named_sources.py).

Every semantic match carries `similarity` on one scale whichever model found it
(calibration.py, stage 2), and each list is cut at `min_relevance` on that scale inside
the vector scan, so the cut costs nothing (the named list excepted: fusion.py decides what
its matches below the cut are). Fusion (fusion.py) and verify (engine.py) come next.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field

from screvi_mcp.local.search import concurrent_sides, interim, multilingual
from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.fusion import SemanticMatch
from screvi_mcp.local.search.keyword import keyword_ranking
from screvi_mcp.local.search.named_sources import named_source
from screvi_mcp.local.search.registry import semantic_index_for
from screvi_mcp.local.storage.library import Library

log = logging.getLogger("screvi_mcp.local.search")

# Each side lists at most this many candidates: the fused list (and so `total`) is bounded,
# and a page deep in the tail of either side says nothing useful anyway.
CANDIDATES_PER_SIDE = 1000
# The named source's best matches for the topic that fusion may put first.
NAMED_SOURCE_CANDIDATES = 10

_warned_keyword_only = False


@dataclass(frozen=True)
class Candidates:
    keyword: list[int]  # highlight seqs, best first
    semantic: list[SemanticMatch] = field(default_factory=list)
    later: list[SemanticMatch] = field(default_factory=list)
    later_places: list[int] = field(default_factory=list)  # each later match's place in fusion
    named: list[SemanticMatch] = field(default_factory=list)


def gather(library: Library, text: str, filters: Filters, min_relevance: float) -> Candidates:
    """Every list for `text` (already stripped of frames, searched_text)."""
    if semantic_index_for(library) is None:
        keyword = keyword_ranking(library.connection(), text, filters, CANDIDATES_PER_SIDE)
        return Candidates(keyword, semantic_side(library, text, filters, min_relevance))

    # The sides at once: FTS5, onnxruntime and numpy all release the GIL, so on two cores
    # the keyword side hides behind the query embedding and the vector scan. The
    # named-source check (SQL over sources and the FTS index) rides with the keyword side.
    def keyword_and_named() -> tuple[list[int], list[SemanticMatch]]:
        ranked = keyword_ranking(library.connection(), text, filters, CANDIDATES_PER_SIDE)
        return ranked, named_source_side(library, text, filters)

    keyword_side = concurrent_sides.submit(keyword_and_named)
    # The multilingual model's query embedding (an English query in a library holding
    # non-English highlights) is the slowest step of all: start it first, beside MiniLM.
    later_side = (
        concurrent_sides.submit(
            lambda: multilingual.later_matches(library, text, filters, min_relevance)
        )
        if multilingual.later_applies(library, text)
        else None
    )
    try:
        semantic = semantic_side(library, text, filters, min_relevance)
    finally:
        keyword, named = keyword_side.result()
        later = later_side.result() if later_side is not None else []
    later = multilingual.ordered_later(library, text, later)
    places = multilingual.later_places(library, text, semantic, later)
    return Candidates(keyword, semantic, later, places, named)


def semantic_side(
    library: Library, text: str, filters: Filters, min_relevance: float
) -> list[SemanticMatch]:
    """The semantic matches search fuses, best first (empty without an index)."""
    index = semantic_index_for(library)
    if index is None:
        _warn_keyword_only()
        return []
    if not text:
        return []
    # A query in another language than English is ranked by the multilingual model alone
    # (multilingual.py); None when it is English or that model is not installed.
    routed = multilingual.query_ranking(library, text, filters, min_relevance, CANDIDATES_PER_SIDE)
    if routed is not None:
        return routed
    # Every match at or above min_relevance on the shared scale is kept: no query-level
    # gate, no cut relative to the best match. Each hid answers the uncut ranking found,
    # on the held-out half and on the blind set (docs/search.md).
    ranked = index.semantic_ranking(
        library.connection(), text, filters, min_relevance, CANDIDATES_PER_SIDE
    )
    # Highlights still waiting for the English model's vector, through the fast model's.
    return interim.with_fast_matches(
        library, ranked, text, filters, min_relevance, CANDIDATES_PER_SIDE
    )


def named_source_side(library: Library, text: str, filters: Filters) -> list[SemanticMatch]:
    """For a query naming a source plus a topic: that source's best matches for the topic.

    The question's embedding is mostly about the name, which no highlight text contains, so
    the topic alone is embedded and only that source's highlights are ranked. Not cut here:
    fusion puts the best few first, those below min_relevance as matches on the source's
    name (fusion.lead_with_source).
    """
    index = semantic_index_for(library)
    if index is None or filters.source:
        return []
    conn = library.connection()
    named = named_source(conn, text)
    if named is None:
        return []
    within = dataclasses.replace(filters, source=named.name_word)
    return index.semantic_ranking(conn, named.topic, within, 0.0, NAMED_SOURCE_CANDIDATES)


def _warn_keyword_only() -> None:
    global _warned_keyword_only
    if not _warned_keyword_only:
        _warned_keyword_only = True
        # Attaching already said why at WARNING (missing extra, or a model change); this
        # only marks where it bites, for whoever is debugging.
        log.debug("search is keyword-only: no semantic index is attached to this library")
