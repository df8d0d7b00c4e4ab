"""Issue 11's ranking rules, each with a small case that fails without the rule."""

from __future__ import annotations

from search_rows import LibraryRows

from screvi_mcp.local.library import Library
from screvi_mcp.local.search.engine import SearchQuery, search


def seqs(library: Library, q: str, **kwargs: object) -> list[int]:
    hits, _ = search(library, SearchQuery(q=q, **kwargs))  # type: ignore[arg-type]
    return [hit.seq for hit in hits]


# --- tag names are searchable text ------------------------------------------------------


def test_a_tag_name_finds_highlights_whose_words_never_say_it(
    library: Library, rows: LibraryRows
) -> None:
    tagged = rows.highlight("Men are disturbed not by things, but by their views of them.", tags=["Stoicism"])
    rows.highlight("An untagged line about things and views.")
    assert seqs(library, "stoicism") == [tagged]
    assert seqs(library, "stoic") == []  # porter: stoic != stoicism, no loose match


def test_tag_changes_keep_the_keyword_index_in_sync(library: Library, rows: LibraryRows) -> None:
    seq = rows.highlight("Own fewer things.", tags=["minimalism"])
    with library.write() as conn:
        conn.execute("UPDATE tags SET name = 'frugality', name_key = 'frugality'")
    assert seqs(library, "minimalism") == []
    assert seqs(library, "frugality") == [seq]
    with library.write() as conn:
        conn.execute("DELETE FROM highlight_tags")
    assert seqs(library, "frugality") == []
    assert seqs(library, "fewer things") == [seq]  # the highlight itself is still indexed
    other = rows.highlight("Pack half the clothes.", tags=["travel"])
    with library.write() as conn:
        conn.execute("DELETE FROM tags WHERE name_key = 'travel'")  # link rows cascade
    assert seqs(library, "travel") == []
    assert seqs(library, "clothes") == [other]
