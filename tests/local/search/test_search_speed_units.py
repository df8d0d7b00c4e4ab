"""Speed settings of search that must not change what it finds (docs/benchmarks.md, issue 30)."""

from __future__ import annotations

import pytest
from search_rows import LibraryRows

from screvi_mcp.local.search.fusion import SemanticMatch
from screvi_mcp.local.storage.library import Library


def test_attaching_an_index_leaves_numpy_blas_on_one_thread(semantic_library: Library) -> None:
    # Several BLAS threads spin against the search's other side on a 2-core machine
    # (blas_threads.py); one thread gives the same scores.
    threadpoolctl = pytest.importorskip("threadpoolctl")
    blas = [info for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]
    assert blas, "numpy's BLAS should be loaded once an index is attached"
    assert {info["num_threads"] for info in blas} == {1}


def test_named_source_sees_sources_and_highlights_written_after_it_last_looked(
    library: Library, rows: LibraryRows
) -> None:
    # named_sources caches the sources (and which name words are rare) per connection until
    # anything is committed: every write since must show on the next search.
    from screvi_mcp.local.search.named_sources import named_source

    conn = library.connection()
    question = "what does Emerson say about conformity"
    assert named_source(conn, question) is None
    emerson = rows.source("Self-Reliance", "book", "Ralph Waldo Emerson")
    found = named_source(conn, question)
    assert found is not None and found.name_word == "emerson"
    # Through this very connection too (its own commits move total_changes, not data_version).
    conn.execute("UPDATE sources SET author = 'R. W. E.' WHERE id = ?", (emerson,))
    conn.commit()
    assert named_source(conn, question) is None
    conn.execute("UPDATE sources SET author = 'Ralph Waldo Emerson' WHERE id = ?", (emerson,))
    conn.commit()
    assert named_source(conn, question) is not None
    # A name word that highlights use in their text is a topic word, not a name.
    for _ in range(4):
        rows.highlight("Emerson walked to Concord.", notify=False)
    assert named_source(conn, question) is None
    rows.delete_source(emerson)
    assert named_source(conn, "what does Ralph say about conformity") is None


def test_similarities_of_many_cosines_are_each_cosines_similarity_bit_for_bit() -> None:
    import random

    from screvi_mcp.local.search.calibration import MINILM, Calibration

    draw = random.Random(7)
    for curve in (MINILM, Calibration(bias=-29.56, slope=31.90), Calibration(-800.0, 1.0)):
        cosines = [draw.uniform(-1.0, 1.0) for _ in range(2000)]
        cosines += [curve.min_cosine(r) for r in (0.3, 0.72, 0.9)] + [-1.0, 0.0, 1.0]
        expected = [curve.similarity(cosine).hex() for cosine in cosines]
        assert [value.hex() for value in curve.similarities(cosines)] == expected


def test_fusion_orders_by_score_then_words_then_cosine_then_keyword_rank_then_appearance() -> None:
    # The definition, spelled out slowly, against the lean loop of fusion.py: random lists
    # with overlaps, a highlight in both semantic lists, and cosine ties.
    import random

    from screvi_mcp.local.search.fusion import SemanticMatch, reciprocal_rank_fusion

    draw = random.Random(11)
    for _ in range(200):
        pool = list(range(draw.randint(40, 300)))
        keyword = draw.sample(pool, draw.randint(0, len(pool)))
        semantic = sorted(
            (SemanticMatch(s, round(draw.random(), 1), 0.5) for s in draw.sample(pool, 40)[:30]),
            key=lambda match: -match.cosine,
        )
        later = [SemanticMatch(s, round(draw.random(), 1), 0.5) for s in draw.sample(pool, 5)]
        places = sorted(draw.sample(range(1, 40), len(later)))
        fused = reciprocal_rank_fusion(keyword, semantic, later=later, later_places=places)
        expected = _fused_by_definition(keyword, semantic, later, places)
        assert [(hit.seq, hit.relevance, hit.semantic) for hit in fused] == expected


def _fused_by_definition(
    keyword: list[int], semantic: list[SemanticMatch], later: list[SemanticMatch], at: list[int]
) -> list[tuple[int, float, SemanticMatch | None]]:
    from screvi_mcp.local.search.fusion import RRF_K

    places = {m.seq: (rank, m) for rank, m in zip(at, later, strict=True)}
    for rank, m in enumerate(semantic, start=1):
        places[m.seq] = (min(rank, places.get(m.seq, (rank, m))[0]), m)
    first = list(dict.fromkeys(keyword + [m.seq for m in semantic + later]))
    keyed = []
    for position, seq in enumerate(first):
        k_rank = keyword.index(seq) + 1 if seq in keyword else None
        place = places.get(seq)
        score = 0.0 if k_rank is None else 1.0 / (RRF_K + k_rank)
        score += 0.0 if place is None else 1.0 / (RRF_K + place[0])
        cosine = 1.0 if place is None else -place[1].cosine
        rank = len(keyword) + 1 if k_rank is None else k_rank
        words_last = k_rank is None  # at equal scores, the hit holding the query's words first
        keyed.append(
            ((-score, words_last, cosine, rank, position), (seq, score, place and place[1]))
        )
    return [hit for _, hit in sorted(keyed)]


def test_the_keyword_side_drops_highlights_of_a_source_deleted_after_it_last_looked(
    library: Library, rows: LibraryRows
) -> None:
    # The deleted sources' ids are cached per connection until anything is committed.
    from screvi_mcp.local.search.filters import Filters
    from screvi_mcp.local.search.keyword import keyword_ranking
    from screvi_mcp.local.storage import clock

    manual, other = rows.source("Sleep Manual"), rows.source("Night Notes")
    mine = rows.highlight("Sleep comes easily after a long walk.", manual, notify=False)
    theirs = rows.highlight("Sleep comes late in summer.", other, notify=False)
    orphan = rows.highlight("Sleep is a habit.", notify=False)
    conn = library.connection()

    def found() -> set[int]:
        return set(keyword_ranking(conn, "sleep", Filters(), 100))

    assert found() == {mine, theirs, orphan}
    rows.delete_source(manual)  # through the writer's connection
    assert found() == {theirs, orphan}
    conn.execute("UPDATE sources SET deleted_at = ? WHERE id = ?", (clock.now(), other))
    conn.commit()  # through this very connection
    assert found() == {orphan}
    conn.execute("UPDATE sources SET deleted_at = NULL")
    conn.commit()
    assert found() == {mine, theirs, orphan}


def test_admitted_seqs_checks_the_filters_and_leaves_liveness_to_the_caller(
    library: Library, rows: LibraryRows
) -> None:
    """The semantic side's check: its vectors are all of live highlights, so only the
    filters are asked (liveness is the keyword side's, in its own query)."""
    from screvi_mcp.local.search.filters import Filters, admitted_seqs

    kept, gone = rows.source("Kept Book"), rows.source("Gone Book")
    mine = rows.highlight("a line", kept, notify=False)
    liked = rows.highlight("a line", kept, favorite=True, notify=False)
    theirs = rows.highlight("a line", gone, notify=False)
    rows.delete_source(gone)
    conn = library.connection()
    everything = [mine, liked, theirs, 10_000]
    assert admitted_seqs(conn, Filters(), everything) == {mine, liked, theirs}
    assert admitted_seqs(conn, Filters(favorite=True), everything) == {liked}
    assert admitted_seqs(conn, Filters(source="Kept Book"), everything) == {mine, liked}
    assert admitted_seqs(conn, Filters(), []) == set()
