"""The keyword side of search: user text to a safe FTS5 query, ranked precisely.

Why "precise": in offline checks (DESIGN.md), a loose OR-of-terms BM25 list fused by RRF
ranked worse than the semantic list alone, because highlights matching one common word
crowd its top. So this side only lists highlights that match *all* the query's content
words (and every quoted phrase) in content, note, source name, author or tag names — exact terms and
rare names, which is what keyword search is good at — and leaves paraphrases to the
semantic side. When a long query has no all-terms match, highlights missing a single
common term are admitted after them (see `_relaxed`).

User text never reaches FTS5 syntax: every term is re-emitted as a double-quoted string,
so `AND`, `NEAR(`, `*`, `:` or unbalanced quotes in `q` are just words.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sqlite3
from dataclasses import dataclass

from screvi_mcp.local.search.connection_cache import cached
from screvi_mcp.local.search.filters import Filters, build_sql_filter
from screvi_mcp.local.search.stopwords import STOPWORDS

# unicode61 splits on everything that is not a letter, a number or private use; `_` too.
WORD = re.compile(r"[^\W_]+", re.UNICODE)
_PHRASE = re.compile(r'"([^"]*)"')
# bm25 column weights: content, note, source_name, source_author, tags (migration 0009). The
# highlight's own words count most; a source title or author match is strong evidence too
# (rare names), a note a little less than content; a tag name is the reader's own label.
_COLUMN_WEIGHTS = (1.0, 0.8, 0.7, 0.7, 0.8)
MAX_TERMS = 16
# Morphological variants: a word of 5+ letters also matches words sharing its first 60%,
# and never fewer than 5 letters (so a 5-letter word matches the words it begins).
_PREFIX_MIN_LENGTH = 5
_PREFIX_SHARE = 0.6
# Long queries only: with 3+ terms, one missing common word should not empty the list.
_RELAX_MIN_TERMS = 3
# A relaxed match must still cover this share of the query's IDF weight.
_RELAX_MIN_COVERAGE = 0.75


@dataclass(frozen=True)
class KeywordQuery:
    """The query's parts that FTS5 will see: single terms and quoted phrases."""

    terms: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]
    variants: bool = False  # terms also match words sharing their first 60% (_term_clause)

    @property
    def empty(self) -> bool:
        return not self.terms and not self.phrases

    def clauses(self) -> list[str]:
        term_clause = _term_clause if self.variants else _quote
        return [term_clause(term) for term in self.terms] + [
            _quote(" ".join(words)) for words in self.phrases
        ]

    def all_of(self) -> str:
        """An FTS5 expression requiring every clause."""
        return " AND ".join(self.clauses())

    def any_of(self) -> str:
        return " OR ".join(self.clauses())


def _term_clause(term: str) -> str:
    """A term, or for a longer word, the term or any word sharing its first 60%.

    Porter stemming joins "prune" and "pruning" but not "simply" (stem "simpli") and
    "simplicity" ("simplic"), nor "conformity" and "conformist", nor "stoic" and
    "stoicism": the prefix does (a 5-letter word is its own prefix). Shorter words get no
    prefix: "cat" must not match "catalogue", nor "stoi" "stoichiometry".
    """
    if len(term) < _PREFIX_MIN_LENGTH or not term.isalpha():
        return _quote(term)
    prefix = term[: max(_PREFIX_MIN_LENGTH, round(len(term) * _PREFIX_SHARE))]
    return f"({_quote(term)} OR {_quote(prefix)}*)"


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def words(text: str) -> list[str]:
    return [word.lower() for word in WORD.findall(text)]


def parse_query(text: str) -> KeywordQuery:
    """Terms (stopwords dropped, unless nothing else is left) and quoted phrases."""
    phrases: list[tuple[str, ...]] = []
    for inner in _PHRASE.findall(text):
        phrase = tuple(words(inner))
        if len(phrase) > 1 and phrase not in phrases:
            phrases.append(phrase)
        elif len(phrase) == 1:
            text += " " + phrase[0]  # a quoted single word is just a term
    rest = _PHRASE.sub(" ", text)
    all_terms = _unique(words(rest))
    terms = [term for term in all_terms if term not in STOPWORDS]
    if not terms and not phrases:
        terms = all_terms
    return KeywordQuery(tuple(terms[:MAX_TERMS]), tuple(phrases[:MAX_TERMS]))


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def keyword_ranking(conn: sqlite3.Connection, text: str, filters: Filters, limit: int) -> list[int]:
    """Seqs of highlights matching `text`, best first, at most `limit`."""
    query = parse_query(text)
    if query.empty:
        return []
    ranked = _ranked(conn, query.all_of(), filters, limit, among=None)
    if ranked:
        return ranked
    # Only when the exact stems match nothing: variants are looser, and on the labelled
    # set adding them to every query pushed exact matches down.
    loose = dataclasses.replace(query, variants=True)
    ranked = _ranked(conn, loose.all_of(), filters, limit, among=None)
    if ranked or len(query.clauses()) < _RELAX_MIN_TERMS:
        return ranked
    return _relaxed(conn, query, filters, limit)


_WEIGHTS_SQL = ", ".join(str(weight) for weight in _COLUMN_WEIGHTS)


def _ranked(
    conn: sqlite3.Connection,
    match: str,
    filters: Filters,
    limit: int,
    among: list[int] | None,
) -> list[int]:
    # The unary + keeps a rowid list out of FTS5's index planning: offered a rowid
    # constraint, FTS5 would re-run the MATCH once per listed rowid.
    among_sql = " AND +f.rowid IN (SELECT value FROM json_each(?))" if among is not None else ""
    among_params: tuple[object, ...] = (json.dumps(among),) if among is not None else ()
    if not filters.restricts:
        return _ranked_then_live(conn, match, limit, among_sql, among_params)
    sql_filter = build_sql_filter(conn, filters)
    rows = conn.execute(
        "SELECT f.rowid FROM highlights_fts f"
        " JOIN highlights h ON h.seq = f.rowid"
        " LEFT JOIN sources s ON s.id = h.source_id"
        f" WHERE highlights_fts MATCH ?{among_sql} AND {sql_filter.where}"
        f" ORDER BY bm25(highlights_fts, {_WEIGHTS_SQL}), f.rowid LIMIT ?",
        (match, *among_params, *sql_filter.params, limit),
    )
    return [int(row[0]) for row in rows]


def _ranked_then_live(
    conn: sqlite3.Connection,
    match: str,
    limit: int,
    among_sql: str = "",
    among_params: tuple[object, ...] = (),
) -> list[int]:
    """The same ranking as `_ranked` with no filter, liveness checked after the LIMIT.

    Joining every match to its highlight and source row before ranking reads a table row
    per match: for a common word (10k+ matches at 100k) that was half the keyword side's
    time. FTS5 ranks on its own index; the best `want` are then checked for liveness in the
    same statement, and in the rare case deleted ones leave too few, a longer list is
    ranked. One statement returning one row: fetched row by row (and checked by a second
    query), the 1,000 rows cost as much again in Python and handed the GIL back and forth
    with the semantic side 2,000 times (measured at 100k: 14.8 ms against 18.0). The
    relaxed pass's list of admitted rows (`among_sql`) is ranked the same way.
    """
    # Liveness alone, the one shared rule, in its form that reads no source row.
    live_rule = build_sql_filter(conn, Filters(), sources_joined=False)
    is_live = f"EXISTS (SELECT 1 FROM highlights h WHERE h.seq = f.rowid AND {live_rule.where})"
    want = limit
    while True:
        # group_concat reads the ranked subquery in its order (checked by the tests).
        ranked, live = conn.execute(
            f"SELECT count(*), group_concat(CASE WHEN {is_live} THEN f.rowid END)"
            " FROM (SELECT rowid FROM highlights_fts f WHERE highlights_fts MATCH ?"
            f"{among_sql} ORDER BY bm25(highlights_fts, {_WEIGHTS_SQL}), rowid LIMIT ?) f",
            (*live_rule.params, match, *among_params, want),
        ).fetchone()
        kept = [int(seq) for seq in live.split(",")] if live else []
        if len(kept) >= limit or int(ranked) < want:
            return kept[:limit]
        want *= 4


def _relaxed(
    conn: sqlite3.Connection, query: KeywordQuery, filters: Filters, limit: int
) -> list[int]:
    """Highlights that miss only low-information clauses, most coverage first.

    Each clause is weighted by its IDF, so missing a common word ("life") costs little and
    missing the rare name the query is about costs too much to be admitted. Missing one
    clause is forgiven, not more: a highlight sharing a single word with a long question
    is the loose match that hurts fusion. So the admitted highlights are those matching
    every clause but at most one cheap one: each such set is one FTS5 intersection, and no
    posting list is read into Python (a common word's list is 100k+ rows at 1M highlights).
    """
    clauses = query.clauses()
    present, idf = _present(conn, clauses)
    if len(present) < len(clauses) - 1:
        return []  # every highlight misses two clauses or more
    if len(present) < len(clauses):
        # One clause no highlight holds (a typo, a paraphrase word): the admitted are those
        # holding every other clause, all at one coverage, and bm25 over their AND ranks
        # them exactly as over the OR of every clause (the same phrases in the same order,
        # the absent one adding 0.0 to each score), without reading the OR's whole union.
        return _ranked(conn, " AND ".join(present), filters, limit, among=None)
    coverage = _admitted(conn, present, idf)
    if not coverage:
        return []
    ordered = _ranked(conn, query.any_of(), filters, limit, among=list(coverage))
    ordered.sort(key=lambda seq: -round(coverage[seq], 6))  # stable: bm25 order within a level
    return ordered


def _present(conn: sqlite3.Connection, clauses: list[str]) -> tuple[list[str], list[float]]:
    """The clauses some highlight holds, and the IDF weight of each.

    A clause no highlight contains (a typo, a paraphrase word) cannot be matched by
    anything, so it does not count against the others.
    """
    total = cached(conn, "highlight_count", _highlight_count)
    counts = [
        int(conn.execute(f"SELECT count(*) FROM {_FTS_MATCH}", (clause,)).fetchone()[0])
        for clause in clauses
    ]
    present = [clause for clause, count in zip(clauses, counts, strict=True) if count]
    idf = [math.log(1 + (total - n + 0.5) / (n + 0.5)) for n in counts if n]
    return present, idf


def _admitted(conn: sqlite3.Connection, present: list[str], idf: list[float]) -> dict[int, float]:
    """With every clause held by some highlight: each admitted highlight's coverage, the
    share of the query's IDF weight it matches."""
    weight_sum = sum(idf) or 1.0
    shares = [weight / weight_sum for weight in idf]
    # (clauses matched, clause missed): every clause, then every clause but one, each
    # summed in clause order as the shares always were.
    every = list(range(len(present)))
    levels: list[tuple[list[int], int | None]] = [(every, None)]
    levels += [([i for i in every if i != j], j) for j in every]
    coverage: dict[int, float] = {}
    for matched, missed in levels:
        share = sum((shares[i] for i in matched), 0.0)
        if share < _RELAX_MIN_COVERAGE:
            continue
        match = " AND ".join(present[i] for i in matched)
        if missed is not None:
            match = f"({match}) NOT {present[missed]}"
        for (seq,) in conn.execute(f"SELECT rowid FROM {_FTS_MATCH}", (match,)):
            coverage[int(seq)] = share
    return coverage


_FTS_MATCH = "highlights_fts WHERE highlights_fts MATCH ?"


def _highlight_count(conn: sqlite3.Connection) -> int:
    """The IDF's document count: a scan of an index of every row (12 ms at 1M highlights),
    so it is read once per change to the library (connection_cache.py)."""
    return int(conn.execute("SELECT count(*) FROM highlights").fetchone()[0]) or 1
