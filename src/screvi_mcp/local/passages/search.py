"""Hybrid search over article passages: keywords (FTS5) and meaning, fused, one hit per
article, best first.

- Keyword side: passages holding *every* content word of the query (and each quoted phrase)
  in their text or their article's title, ranked by bm25. All-terms, because a loose
  any-term list crowds the top with passages sharing one common word (DESIGN.md).
- Meaning side: the passages nearest the query by cosine; below `min_relevance` a passage is
  not admitted on meaning alone (keyword matches are always kept).
- Fusion: reciprocal rank fusion (k = 60) per passage; an article ranks by its best passage,
  and that passage is the hit, with the offsets `read_article` takes.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from screvi_mcp.local.search.stopwords import STOPWORDS
from screvi_mcp.local.storage.store import wire

# Raw cosine under which a passage found only by meaning is left out: fitted on the tuning
# half of the labelled long articles (docs/articles.md), where MiniLM and mpnet both fitted
# 0.3; the held-out figures are reported beside it.
DEFAULT_MIN_RELEVANCE = 0.3
RRF_K = 60
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
    cosine: float | None
    keyword: bool


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


def fuse(keyword: list[int], semantic: list[tuple[int, float]], min_cosine: float) -> list[Match]:
    """RRF of the two lists; a passage only the meaning side found needs `min_cosine`."""
    kw_rank = {pid: rank for rank, pid in enumerate(keyword)}
    cosines = dict(semantic)
    scores: dict[int, float] = {}
    for rank, pid in enumerate(keyword):
        scores[pid] = 1.0 / (RRF_K + rank + 1)
    for rank, (pid, cosine) in enumerate(semantic):
        if pid in kw_rank or cosine >= min_cosine:
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return [Match(pid, score, cosines.get(pid), pid in kw_rank) for pid, score in ordered]


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
    conn: sqlite3.Connection, index: Any, query: PassageQuery, *, root_url: str
) -> tuple[list[dict[str, Any]], int]:
    """One page of hits (each an article, its best passage and the scores) and the total.

    `index` is the library's `PassageIndex`, or None: keywords only.
    """
    keyword = keyword_ranking(conn, query.q, query.filters)
    semantic: list[tuple[int, float]] = []
    if index is not None and len(index):
        nearest = index.top(query.q, SEMANTIC_LIMIT)
        allowed = admitted(conn, [pid for pid, _ in nearest], query.filters)
        semantic = [(pid, cosine) for pid, cosine in nearest if pid in allowed]
    hits = best_per_article(conn, fuse(keyword, semantic, query.min_relevance))
    start = (query.page - 1) * query.per_page
    page = hits[start : start + query.per_page]
    if index is not None and semantic:
        page = specific(conn, index, query, page, set(keyword))
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
                "match_type": _match_type(match, query.min_relevance),
                "relevance": round(match.relevance, 6),
            }
        )
    return results, len(hits)


def specific(
    conn: sqlite3.Connection,
    index: Any,
    query: PassageQuery,
    page: list[tuple[Match, dict[str, Any]]],
    keyword: set[int],
) -> list[tuple[Match, dict[str, Any]]]:
    """Each hit's passage chosen again within its article, preferring the specific to the
    generic (`index.GENERIC_PENALTY`); the article's rank is unchanged. Candidates are the
    passages a hit may show: near enough by meaning, or matching every keyword."""
    from screvi_mcp.local.storage.store import passages as passage_rows

    scored = index.specific_passages(conn, query.q, [row["article_id"] for _, row in page])
    chosen: list[tuple[Match, dict[str, Any]]] = []
    for match, row in page:
        eligible = [
            (score, pid, cosine)
            for pid, cosine, score in scored.get(row["article_id"], [])
            if pid == match.passage_id or pid in keyword or cosine >= query.min_relevance
        ]
        if not eligible or max(eligible)[1] == match.passage_id:
            chosen.append((match, row))
            continue
        _, best, cosine = max(eligible)
        better = Match(best, match.relevance, cosine, best in keyword)
        chosen.append((better, passage_rows.rows(conn, [best])[best]))
    return chosen


def _match_type(match: Match, min_cosine: float) -> str:
    semantic = match.cosine is not None and match.cosine >= min_cosine
    if match.keyword:
        return "both" if semantic else "keyword"
    return "semantic"
