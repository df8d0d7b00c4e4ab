"""The relaxed keyword pass (a long query no highlight matches in full) as FTS5 intersections:
the same highlights, coverage and order as reading every clause's posting list into sets."""

from __future__ import annotations

import json
import math
import random
import sqlite3

from search_rows import LibraryRows

from screvi_mcp.local.search.filters import Filters, build_sql_filter
from screvi_mcp.local.search.keyword import (
    _RELAX_MIN_COVERAGE,
    _WEIGHTS_SQL,
    _admitted,
    _present,
    _relaxed,
    keyword_ranking,
    parse_query,
)
from screvi_mcp.local.storage.library import Library

# Common words (in most highlights), middling ones and rare ones: missing a common one is
# forgiven, missing a rare one is not.
_COMMON = ["river", "stone"]
_MIDDLE = ["lantern", "harbour", "meadow", "copper"]
_RARE = ["quixote", "zanzibar", "obelisk"]


def _coverage_by_sets(conn: sqlite3.Connection, q: str) -> dict[int, float]:
    """The former implementation's admission: every clause's posting list as a Python set."""
    query = parse_query(q)
    total = int(conn.execute("SELECT count(*) FROM highlights").fetchone()[0]) or 1
    matches = [
        {
            int(row[0])
            for row in conn.execute(
                "SELECT rowid FROM highlights_fts WHERE highlights_fts MATCH ?", (clause,)
            )
        }
        for clause in query.clauses()
    ]
    matches = [m for m in matches if m]
    idf = [math.log(1 + (total - len(m) + 0.5) / (len(m) + 0.5)) for m in matches]
    weight_sum = sum(idf) or 1.0
    coverage: dict[int, float] = {}
    hits: dict[int, int] = {}
    for seqs, weight in zip(matches, idf, strict=True):
        for seq in seqs:
            coverage[seq] = coverage.get(seq, 0.0) + weight / weight_sum
            hits[seq] = hits.get(seq, 0) + 1
    needed = len(query.clauses()) - 1
    return {
        s: share
        for s, share in coverage.items()
        if share >= _RELAX_MIN_COVERAGE and hits[s] >= needed
    }


def _by_sets(conn: sqlite3.Connection, q: str, filters: Filters, limit: int) -> list[int]:
    """The former relaxed pass whole: its admission, then every admitted live match joined
    to its highlight and source rows and ranked by bm25."""
    coverage = _coverage_by_sets(conn, q)
    if not coverage:
        return []
    sql_filter = build_sql_filter(conn, filters)
    ordered = [
        int(row[0])
        for row in conn.execute(
            "SELECT f.rowid FROM highlights_fts f JOIN highlights h ON h.seq = f.rowid"
            " LEFT JOIN sources s ON s.id = h.source_id WHERE highlights_fts MATCH ?"
            " AND +f.rowid IN (SELECT value FROM json_each(?))"
            f" AND {sql_filter.where} ORDER BY bm25(highlights_fts, {_WEIGHTS_SQL}), f.rowid"
            " LIMIT ?",
            (parse_query(q).any_of(), json.dumps(list(coverage)), *sql_filter.params, limit),
        )
    ]
    ordered.sort(key=lambda seq: -round(coverage[seq], 6))
    return ordered


def _text(rng: random.Random) -> str:
    words = [w for w in _COMMON if rng.random() < 0.8]
    words += [w for w in _MIDDLE if rng.random() < 0.3]
    words += [w for w in _RARE if rng.random() < 0.08]
    words += ["filler"] * rng.randint(0, 6)
    rng.shuffle(words)
    return " ".join(words) or "filler"


def test_relaxed_pass_matches_the_set_based_pass(library: Library, rows: LibraryRows) -> None:
    rng = random.Random(30)
    made = rows.highlights(
        [(_text(rng), None, None, rng.random() < 0.5, []) for _ in range(300)], notify=False
    )
    for seq in made[::7]:  # deleted rows are never listed, and do not shorten the list
        rows.delete(seq)
    conn = library.connection()
    vocabulary = _COMMON + _MIDDLE + _RARE + ["unheardof"]
    queries = [" ".join(rng.sample(vocabulary, rng.randint(3, 5))) for _ in range(150)]
    queries += ['"river stone" lantern quixote', "river stone harbour unheardof nowhere"]
    admitted_somewhere = 0
    for q in queries:
        expected = _by_sets(conn, q, Filters(), 40)
        assert _relaxed(conn, parse_query(q), Filters(), 40) == expected, q
        favourites = Filters(favorite=True)
        assert _relaxed(conn, parse_query(q), favourites, 40) == _by_sets(conn, q, favourites, 40)
        admitted_somewhere += bool(expected)
    # The crafted library exercises every level: full matches, one clause missed, nothing.
    assert 20 < admitted_somewhere < len(queries)


def test_relaxed_pass_still_ranks_the_rare_name_first(library: Library, rows: LibraryRows) -> None:
    target = rows.highlight("Obelisk of copper by the river", notify=False)
    rows.highlights([(f"river stone {i}", None, None, False, []) for i in range(30)], notify=False)
    conn = library.connection()
    found = keyword_ranking(conn, "obelisk river stone", Filters(), 10)
    assert found[0] == target


def test_relaxed_pass_weighs_clauses_by_the_current_highlight_count(
    library: Library, rows: LibraryRows
) -> None:
    """The count behind the IDF weights is cached per connection: a write must refresh it."""
    rows.highlights(
        [(f"river stone lantern {i}", None, None, False, []) for i in range(5)], notify=False
    )
    rows.highlight("river stone copper", notify=False)
    conn = library.connection()
    q = "river stone copper lantern"
    clauses = parse_query(q).clauses()
    assert _admitted(conn, *_present(conn, clauses)) == _coverage_by_sets(conn, q)
    rows.highlights([(f"filler {i}", None, None, False, []) for i in range(40)], notify=False)
    assert _admitted(conn, *_present(conn, clauses)) == _coverage_by_sets(conn, q)
