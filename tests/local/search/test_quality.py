"""Ranking quality on the labelled set: keyword-only, semantic-only and hybrid.

Hybrid is measured exactly as a client gets it (engine.search with default parameters,
min_relevance 0.72 included); semantic-only is the bare vector ranking with no threshold,
its best case. The test fails if hybrid is worse than either side on top-3 hit rate or MRR.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from labelled_set import OFF_TOPIC_QUERIES, PASSAGES, QUERIES, SOURCES
from search_rows import LibraryRows

from screvi_mcp.local.library import Library
from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.keyword import keyword_ranking
from screvi_mcp.local.search.registry import semantic_index_for


@dataclass(frozen=True)
class Scores:
    top3: float
    mrr: float


def evaluate(rank: Callable[[str], list[str]]) -> Scores:
    hits = 0
    reciprocal = 0.0
    for query in QUERIES:
        ranked = rank(query.q)
        first = next((i for i, key in enumerate(ranked) if key in query.relevant), None)
        if first is not None:
            hits += first < 3
            reciprocal += 1.0 / (first + 1)
    return Scores(hits / len(QUERIES), reciprocal / len(QUERIES))


@pytest.fixture
def filled(semantic_library: Library, rows: LibraryRows) -> dict[int, str]:
    source_ids = {s.key: rows.source(s.name, s.type, s.author) for s in SOURCES}
    seqs = rows.highlights(
        [
            (p.content, source_ids[p.source] if p.source else None, p.note, False, [])
            for p in PASSAGES
        ]
    )
    return {seq: p.key for seq, p in zip(seqs, PASSAGES, strict=True)}


def test_hybrid_is_no_worse_than_either_side(
    semantic_library: Library, filled: dict[int, str], capsys: pytest.CaptureFixture[str]
) -> None:
    conn = semantic_library.connection()
    index = semantic_index_for(semantic_library)
    assert index is not None

    def keyword(q: str) -> list[str]:
        return [filled[s] for s in keyword_ranking(conn, q, Filters(), 1000)]

    def semantic(q: str) -> list[str]:
        assert index is not None
        return [filled[m.seq] for m in index.semantic_ranking(conn, q, Filters(), 0.0, 1000)]

    def hybrid(q: str) -> list[str]:
        hits, _ = search(semantic_library, SearchQuery(q=q, per_page=50))
        return [filled[hit.seq] for hit in hits]

    results = {"keyword": evaluate(keyword), "semantic": evaluate(semantic)}
    results["hybrid"] = evaluate(hybrid)
    report = f"labelled set: {len(PASSAGES)} highlights, {len(QUERIES)} queries\n" + "\n".join(
        f"  {name:9s} top-3 {s.top3:.3f}  MRR {s.mrr:.3f}" for name, s in results.items()
    )
    with capsys.disabled():
        print("\n" + report)
    best = results["hybrid"]
    for side in ("keyword", "semantic"):
        assert best.top3 >= results[side].top3, report
        assert best.mrr >= results[side].mrr, report


def test_default_search_returns_no_semantic_noise_for_off_topic_queries(
    semantic_library: Library, filled: dict[int, str]
) -> None:
    for q in OFF_TOPIC_QUERIES:
        hits, _ = search(semantic_library, SearchQuery(q=q))
        assert [h for h in hits if h.match_type != "keyword"] == [], q


def test_default_search_finds_paraphrases(
    semantic_library: Library, filled: dict[int, str]
) -> None:
    found = 0
    paraphrases = [query for query in QUERIES if query.kind == "paraphrase"]
    for query in paraphrases:
        hits, _ = search(semantic_library, SearchQuery(q=query.q, per_page=3))
        found += any(filled[hit.seq] in query.relevant for hit in hits)
    assert found >= 0.8 * len(paraphrases)
