"""The labelled set for passage search: every `long_articles_*.py` module here, joined.

Each module holds `ARTICLES` and `QUERIES` (labelled_articles.py's shapes); new modules join
the set by their file name alone. Queries are split into two halves, deterministically:
the queries of each kind alternate between them in the order written, so both halves hold
every kind in equal numbers (one apart at most). `min_relevance` is fitted on the tuning
half only (article_evaluation.py).
"""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path

from local.passages.labelled_articles import Article, Query

MODULES = sorted(path.stem for path in Path(__file__).parent.glob("long_articles_*.py"))


def _gather() -> tuple[list[Article], list[Query]]:
    assert MODULES, f"no long_articles_*.py beside {__file__}: the labelled set is missing"
    articles: list[Article] = []
    queries: list[Query] = []
    for name in MODULES:
        module = importlib.import_module(f"local.passages.{name}")
        articles.extend(module.ARTICLES)
        queries.extend(module.QUERIES)
    keys = Counter(article.key for article in articles)
    assert all(count == 1 for count in keys.values()), "article keys must be unique"
    unknown = {q.article for q in queries if q.article is not None and q.article not in keys}
    assert not unknown, f"queries name articles that are not in the set: {unknown}"
    return articles, queries


def _halves(queries: list[Query]) -> list[str]:
    seen: Counter[str] = Counter()
    halves = []
    for query in queries:
        halves.append("tuning" if seen[query.kind] % 2 == 0 else "heldout")
        seen[query.kind] += 1
    return halves


ARTICLES, QUERIES = _gather()
HALVES = _halves(QUERIES)  # HALVES[i] is the half of QUERIES[i]
