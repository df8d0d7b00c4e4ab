"""Speed settings of search that must not change what it finds (docs/benchmarks.md, issue 30)."""

from __future__ import annotations

import pytest
from search_rows import LibraryRows

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
