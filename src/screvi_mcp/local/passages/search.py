"""Hybrid search over article passages: keywords (FTS5) and meaning, fused, one hit per
article, best first.

- Keyword side: passages holding *every* content word of the query (and each quoted phrase)
  in their text or their article's title, ranked by bm25. All-terms, because a loose
  any-term list crowds the top with passages sharing one common word (DESIGN.md).
- Meaning side: the passages nearest the query by cosine; below `min_relevance` a passage is
  not admitted on meaning alone (keyword matches are always kept).
- Non-English articles' passages: ranked by the multilingual model (multilingual.py) in a
  list of their own, above its own cut (`foreign_cut`), and no longer by the English model
  once they have its vector (the English models rank them poorly: docs/articles.md).
- Fusion: reciprocal rank fusion (k = 60) per passage; an article ranks by its best passage,
  and that passage is the hit, with the offsets `read_article` takes.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from screvi_mcp.local.search.stopwords import STOPWORDS
from screvi_mcp.local.storage.store import wire

log = logging.getLogger("screvi_mcp.local.passages")

# Raw cosine under which a passage found only by meaning is left out: fitted on the tuning
# half of the labelled long articles (docs/articles.md), where MiniLM and mpnet both fitted
# 0.3; the held-out figures are reported beside it.
DEFAULT_MIN_RELEVANCE = 0.3
RRF_K = 60
# The multilingual model's cosines sit higher and closer together than the English models'
# (0.7-0.9 for any text near the query's subject), so its list has a cut of its own, fitted
# on the tuning half over 0.75-0.86 (both models; docs/articles.md), and moved with
# `min_relevance` at half its slope (min_relevance 0, the plain ranking, admits all).
FOREIGN_MIN_COSINE = 0.79
FOREIGN_SLOPE = 0.5
KEYWORD_LIMIT = 200
SEMANTIC_LIMIT = 300
MAX_TERMS = 16
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_PHRASE = re.compile(r'"([^"]*)"')


@dataclass(frozen=True)
class PassageFilters:
    tag: str | None = None
    status: str | None = None
    favorite: bool | None = None
    saved_since: str | None = None
    saved_before: str | None = None

    def sql(self) -> tuple[str, list[Any]]:
        """A condition on `a` (articles) and `s` (sources), with its arguments."""
        clauses = ["s.deleted_at IS NULL"]
        args: list[Any] = []
        if self.status is not None:
            clauses.append("a.status = ?")
            args.append(self.status)
        if self.favorite is not None:
            clauses.append("a.favorite = ?")
            args.append(int(self.favorite))
        if self.tag is not None:
            clauses.append(
                "s.id IN (SELECT st.source_id FROM source_tags st JOIN tags t "
                "ON t.id = st.tag_id WHERE t.name_key = ? OR t.id = ?)"
            )
            args.extend([self.tag.lower()] * 2)
        for op, value in ((">=", self.saved_since), ("<", self.saved_before)):
            if value is not None:
                clauses.append(f"a.saved_at {op} ?")
                args.append(value)
        return " AND ".join(clauses), args


@dataclass(frozen=True)
class Match:
    passage_id: int
    relevance: float
    cosine: float | None  # the English model's, else the multilingual model's
    keyword: bool
    semantic: bool = False  # admitted by meaning (above its model's cut)


def fts_query(text: str) -> str | None:
    """All the query's content words and quoted phrases, each quoted: user text never
    reaches FTS5 syntax. None when nothing is left (only stopwords or punctuation)."""
    phrases = [" ".join(_WORD.findall(p.lower())) for p in _PHRASE.findall(text)]
    rest = _PHRASE.sub(" ", text).lower()
    terms = [w for w in dict.fromkeys(_WORD.findall(rest)) if w not in STOPWORDS]
    clauses = [f'"{t}"' for t in terms[:MAX_TERMS]] + [f'"{p}"' for p in phrases if p]
    return " AND ".join(clauses) if clauses else None


def keyword_ranking(conn: sqlite3.Connection, text: str, filters: PassageFilters) -> list[int]:
    query = fts_query(text)
    if query is None:
        return []
    where, args = filters.sql()
    rows = conn.execute(
        "SELECT f.rowid FROM article_passages_fts f JOIN article_passages p ON p.id = f.rowid "
        "JOIN articles a ON a.source_id = p.article_id JOIN sources s ON s.id = a.source_id "
        f"WHERE article_passages_fts MATCH ? AND {where} "
        "ORDER BY bm25(article_passages_fts, 1.0, 0.5) LIMIT ?",
        [query, *args, KEYWORD_LIMIT],
    )
    return [int(r[0]) for r in rows]


def admitted(conn: sqlite3.Connection, ids: list[int], filters: PassageFilters) -> set[int]:
    """Those of `ids` whose article is live and passes the filters."""
    where, args = filters.sql()
    rows = conn.execute(
        "SELECT p.id FROM article_passages p JOIN articles a ON a.source_id = p.article_id "
        "JOIN sources s ON s.id = a.source_id "
        f"WHERE p.id IN (SELECT value FROM json_each(?)) AND {where}",
        [json.dumps(ids), *args],
    )
    return {int(r[0]) for r in rows}


@dataclass(frozen=True)
class Ranked:
    """One model's nearest passages (id, cosine), best first, and its cut."""

    nearest: list[tuple[int, float]]
    cut: float


def fuse(keyword: list[int], lists: list[Ranked]) -> list[Match]:
    """RRF of the keyword list and each model's; a passage only meaning found needs its
    model's cut."""
    kw_rank = {pid: rank for rank, pid in enumerate(keyword)}
    cosines: dict[int, float] = {}
    admitted_by_meaning: set[int] = set()
    scores: dict[int, float] = {}
    for rank, pid in enumerate(keyword):
        scores[pid] = 1.0 / (RRF_K + rank + 1)
    for ranked in lists:
        for rank, (pid, cosine) in enumerate(ranked.nearest):
            cosines.setdefault(pid, cosine)
            if cosine >= ranked.cut:
                admitted_by_meaning.add(pid)
            if pid in kw_rank or cosine >= ranked.cut:
                scores[pid] = scores.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return [
        Match(pid, score, cosines.get(pid), pid in kw_rank, pid in admitted_by_meaning)
        for pid, score in ordered
    ]


def foreign_cut(min_relevance: float) -> float:
    """The multilingual list's cut for a `min_relevance` given on the English models' scale."""
    return FOREIGN_MIN_COSINE + FOREIGN_SLOPE * (min_relevance - DEFAULT_MIN_RELEVANCE)


def best_per_article(
    conn: sqlite3.Connection, matches: list[Match]
) -> list[tuple[Match, dict[str, Any]]]:
    """Each article's best passage (the first in `matches`), with the passage row."""
    from screvi_mcp.local.storage.store import passages as passage_rows

    found = passage_rows.rows(conn, [m.passage_id for m in matches])
    seen: set[str] = set()
    hits: list[tuple[Match, dict[str, Any]]] = []
    for match in matches:
        row = found.get(match.passage_id)
        if row is None or row["article_id"] in seen:
            continue
        seen.add(row["article_id"])
        hits.append((match, row))
    return hits


def articles_by_id(conn: sqlite3.Connection, ids: list[str], root_url: str) -> dict[str, Any]:
    rows = conn.execute(
        f"{wire.ARTICLE_SELECT} WHERE s.id IN (SELECT value FROM json_each(?))", (json.dumps(ids),)
    ).fetchall()
    return {item["id"]: item for item in wire.articles(conn, rows, root_url=root_url)}


@dataclass(frozen=True)
class PassageQuery:
    q: str
    filters: PassageFilters
    min_relevance: float = DEFAULT_MIN_RELEVANCE
    page: int = 1
    per_page: int = 10


def search_passages(
    conn: sqlite3.Connection,
    index: Any,
    query: PassageQuery,
    *,
    root_url: str,
    foreign: Any = None,
) -> tuple[list[dict[str, Any]], int]:
    """One page of hits (each an article, its best passage and the scores) and the total.

    `index` is the library's `PassageIndex`, or None: keywords only; `foreign` its
    `MultilingualPassageIndex` (non-English articles' passages), or None.
    """
    keyword = keyword_ranking(conn, query.q, query.filters)
    lists = [
        ranked
        for ranked in (_english(conn, index, foreign, query), _foreign(conn, foreign, query))
        if ranked is not None
    ]
    hits = best_per_article(conn, fuse(keyword, lists))
    start = (query.page - 1) * query.per_page
    page = hits[start : start + query.per_page]
    if any(ranked.nearest for ranked in lists):
        page = specific(conn, (index, foreign), query, page, set(keyword))
    articles = articles_by_id(conn, [row["article_id"] for _, row in page], root_url)
    results = []
    for match, row in page:
        article = articles.get(row["article_id"])
        if article is None:
            continue
        results.append(
            {
                "article": article,
                "passage": {
                    "ordinal": row["ordinal"],
                    "offset": row["start"],
                    "length": row["length"],
                    "text": row["text"],
                },
                "similarity": None if match.cosine is None else round(match.cosine, 4),
                "match_type": _match_type(match),
                "relevance": round(match.relevance, 6),
            }
        )
    return results, len(hits)


def _nearest(conn: sqlite3.Connection, index: Any, query: PassageQuery) -> list[tuple[int, float]]:
    nearest: list[tuple[int, float]] = index.top(query.q, SEMANTIC_LIMIT)
    allowed = admitted(conn, [pid for pid, _ in nearest], query.filters)
    return [(pid, cosine) for pid, cosine in nearest if pid in allowed]


def _english(
    conn: sqlite3.Connection, index: Any, foreign: Any, query: PassageQuery
) -> Ranked | None:
    """The English model's list, without the passages the multilingual model ranks."""
    if index is None or not len(index):
        return None
    nearest = _nearest(conn, index, query)
    if foreign is not None:
        nearest = [(pid, cosine) for pid, cosine in nearest if pid not in foreign.matrix]
    return Ranked(nearest, query.min_relevance)


def _foreign(conn: sqlite3.Connection, index: Any, query: PassageQuery) -> Ranked | None:
    """The multilingual model's list (non-English articles' passages)."""
    if index is None or not len(index):
        return None
    try:
        nearest = _nearest(conn, index, query)
    except Exception as exc:  # the engine failed to load: the English model alone
        log.warning("passage search without the multilingual model: %s", exc)
        return None
    return Ranked(nearest, foreign_cut(query.min_relevance))


def specific(
    conn: sqlite3.Connection,
    indexes: tuple[Any, Any],
    query: PassageQuery,
    page: list[tuple[Match, dict[str, Any]]],
    keyword: set[int],
) -> list[tuple[Match, dict[str, Any]]]:
    """Each hit's passage chosen again within its article, preferring the specific to the
    generic (`index.GENERIC_PENALTY`); the article's rank is unchanged. Candidates are the
    passages a hit may show: near enough by meaning, or matching every keyword. A
    non-English article's are scored by the multilingual model (`indexes` is the English
    index and the multilingual one, either None)."""
    from screvi_mcp.local.storage.store import passages as passage_rows

    ids = [row["article_id"] for _, row in page]
    english, foreign = (
        {} if index is None else _scored(index, conn, query.q, ids) for index in indexes
    )
    chosen: list[tuple[Match, dict[str, Any]]] = []
    for match, row in page:
        scored, cut = english.get(row["article_id"], []), query.min_relevance
        if row["article_id"] in foreign:
            scored, cut = foreign[row["article_id"]], foreign_cut(query.min_relevance)
        eligible = [
            (score, pid, cosine)
            for pid, cosine, score in scored
            if pid == match.passage_id or pid in keyword or cosine >= cut
        ]
        if not eligible or max(eligible)[1] == match.passage_id:
            chosen.append((match, row))
            continue
        _, best, cosine = max(eligible)
        better = Match(best, match.relevance, cosine, best in keyword, cosine >= cut)
        chosen.append((better, passage_rows.rows(conn, [best])[best]))
    return chosen


def _scored(
    index: Any, conn: sqlite3.Connection, text: str, ids: list[str]
) -> dict[str, list[tuple[int, float, float]]]:
    try:
        scored: dict[str, list[tuple[int, float, float]]] = index.specific_passages(conn, text, ids)
    except Exception as exc:  # the multilingual engine failed to load
        log.warning("passage choice without %s: %s", index.model_id, exc)
        return {}
    return scored


def _match_type(match: Match) -> str:
    if match.keyword:
        return "both" if match.semantic else "keyword"
    return "semantic"
