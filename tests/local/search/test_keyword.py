"""The keyword side alone: safe query building, precise matching, filters, liveness."""

from __future__ import annotations

import pytest
from search_rows import LibraryRows

from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.search.keyword import parse_query
from screvi_mcp.local.storage.library import Library


def seqs(library: Library, q: str, **kwargs: object) -> list[int]:
    hits, _ = search(library, SearchQuery(q=q, **kwargs))  # type: ignore[arg-type]
    return [hit.seq for hit in hits]


def test_parse_drops_stopwords_and_keeps_phrases() -> None:
    parsed = parse_query('what is the "map and the territory" about Korzybski')
    assert parsed.terms == ("korzybski",)
    assert parsed.phrases == (("map", "and", "the", "territory"),)


def test_only_stopwords_are_kept_rather_than_dropping_everything() -> None:
    assert parse_query("to be or not to be").terms == ("to", "be", "or", "not")


@pytest.mark.parametrize(
    "q",
    ['"unbalanced', "NEAR(a b", "a AND OR NOT", "col:value", "*", "^start", "x -y +z", '""', "(("],
)
def test_fts_syntax_in_q_never_raises(library: Library, rows: LibraryRows, q: str) -> None:
    rows.highlight("some words a value start z")
    search(library, SearchQuery(q=q))


def test_all_terms_required_and_porter_stemming(library: Library, rows: LibraryRows) -> None:
    both = rows.highlight("Gardeners prune roses in early spring.")
    one = rows.highlight("Roses are red.")
    assert seqs(library, "pruning rose") == [both]
    assert one in seqs(library, "roses")


def test_matches_source_name_author_and_note(library: Library, rows: LibraryRows) -> None:
    book = rows.source("Meditations", author="Marcus Aurelius")
    in_book = rows.highlight("The impediment to action advances action.", book)
    with_note = rows.highlight("Plain text here.", note="Reminds me of Aurelius")
    found = seqs(library, "aurelius")
    assert set(found) == {in_book, with_note}


def test_keyword_hits_have_no_similarity(library: Library, rows: LibraryRows) -> None:
    rows.highlight("Entropy always increases in a closed system.")
    hits, total = search(library, SearchQuery(q="entropy"))
    assert total == 1
    assert hits[0].match_type == "keyword"
    assert hits[0].similarity is None
    assert hits[0].verified_relevance is None


def test_deleted_highlights_and_sources_are_never_returned(
    library: Library, rows: LibraryRows
) -> None:
    source = rows.source("Gone Book")
    under_deleted_source = rows.highlight("Quasar light travels far.", source)
    deleted = rows.highlight("Quasar jets are bright.")
    kept = rows.highlight("Quasar catalogues list thousands.")
    rows.delete(deleted)
    rows.delete_source(source)
    assert seqs(library, "quasar") == [kept]
    assert under_deleted_source not in seqs(library, "quasar")


def test_filters(library: Library, rows: LibraryRows) -> None:
    book = rows.source("The Ölbaum Chronicle", type="book", author="Ana Pérez")
    video = rows.source("Talks", type="youtube", author="Someone")
    a = rows.highlight("Olive groves need little water.", book, favorite=True, tags=["Trees"])
    b = rows.highlight("Olive oil pressing explained.", video)
    assert seqs(library, "olive", source="ölbaum") == [a]
    assert seqs(library, "olive", source="PÉREZ") == [a]
    assert seqs(library, "olive", types=["video"]) == [b]
    assert seqs(library, "olive", types=["book"]) == [a]
    assert seqs(library, "olive", tag="trees") == [a]
    assert seqs(library, "olive", favorite=True) == [a]
    assert seqs(library, "olive", favorite=False) == [b]
    assert seqs(library, "olive", source="nobody") == []


def test_pagination_and_total(library: Library, rows: LibraryRows) -> None:
    made = [rows.highlight(f"Lantern number {i} glows.") for i in range(7)]
    first, total = search(library, SearchQuery(q="lantern", per_page=3))
    second, _ = search(library, SearchQuery(q="lantern", per_page=3, page=3))
    assert total == 7
    assert len(first) == 3 and len(second) == 1
    everything, _ = search(library, SearchQuery(q="lantern", per_page=50))
    assert sorted(hit.seq for hit in everything) == made


def test_long_query_relaxes_when_no_highlight_has_every_term(
    library: Library, rows: LibraryRows
) -> None:
    target = rows.highlight("Shackleton kept the crew alive through the Antarctic winter.")
    for i in range(20):
        rows.highlight(f"Winter note {i} about the crew of a ship.")
    found = seqs(library, "Shackleton crew winter survival")
    assert found[0] == target


def test_ranking_keeps_bm25_order_and_skips_deleted_rows_past_the_limit(
    library: Library, rows: LibraryRows
) -> None:
    """The unfiltered ranking is one statement (liveness and the list in one row): its order
    must be FTS5's bm25 order, and deleted rows among the best must not shorten the list."""
    from screvi_mcp.local.search.filters import Filters
    from screvi_mcp.local.search.keyword import _WEIGHTS_SQL, keyword_ranking

    made = [
        rows.highlight(" ".join(["comet"] * (1 + i % 5) + ["filler"] * (i % 7)) + f" {i}")
        for i in range(30)
    ]
    conn = library.connection()
    expected = [
        int(row[0])
        for row in conn.execute(
            "SELECT rowid FROM highlights_fts WHERE highlights_fts MATCH '\"comet\"'"
            f" ORDER BY bm25(highlights_fts, {_WEIGHTS_SQL}), rowid"
        )
    ]
    assert sorted(expected) == made
    assert keyword_ranking(conn, "comet", Filters(), 1000) == expected
    for seq in expected[:4]:  # the four best are deleted: a limit of 3 must look further
        rows.delete(seq)
    assert keyword_ranking(conn, "comet", Filters(), 3) == expected[4:7]
