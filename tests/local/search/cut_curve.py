"""What each way of returning fewer hits costs: the trade-off curves behind docs/search.md's
"Negatives" section, for the attached English model (mpnet unless `SCREVI_ENGLISH_MODEL`).

For each set (tuning and held-out halves, blind set) and each setting, over the positive
queries: top-3, MRR, and the share of queries losing an answer the plain ranking
(`min_relevance=0`) has in its top 3; over the negatives: the share returning nothing.

- `min_relevance`: the per-hit cut on the shared similarity scale;
- `judge`: `verify=true` at the default cut, then dropping semantic-only hits whose
  `verified_relevance` is below the threshold (what a dropping verify would do), or all
  of them when the query's best is below it (a query-level verdict).

    .venv/bin/python tests/local/search/cut_curve.py
"""

from __future__ import annotations

import math
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import evaluation
from evaluation import LabelledLibrary, labelled_library
from labelled_set import MAIN

from screvi_mcp.local.search import calibration
from screvi_mcp.local.search.engine import SearchHit, SearchQuery, search

MIN_RELEVANCE = [0.0, 0.5, 0.72, 0.73, 0.74, 0.75, 0.76, 0.78, 0.80, 0.83, 0.86]
JUDGE = [0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5]

Ranked = Callable[[str], list[str]]


@dataclass(frozen=True)
class Point:
    top3: float
    mrr: float
    lost: float  # share of positive queries losing an answer of the plain ranking's top 3
    negatives_empty: float


def measure(labelled: LabelledLibrary, half: str, ranked: Ranked) -> Point:
    queries = labelled.set.queries_by_half[half]
    negatives = labelled.set.negatives_by_half[half]
    top3 = mrr = lost = 0.0
    for query in queries:
        found = ranked(query.q)
        first = next((i for i, key in enumerate(found) if key in query.relevant), None)
        if first is not None:
            top3 += first < 3
            mrr += 1.0 / (first + 1)
        answers = [key for key in labelled.plain(query.q)[:3] if key in query.relevant]
        if answers and (
            any(key not in found for key in answers) or not set(found[:3]) & set(query.relevant)
        ):
            lost += 1
    empty = sum(not ranked(q) for q, _ in negatives)
    n = len(queries)
    return Point(top3 / n, mrr / n, lost / n, empty / max(len(negatives), 1))


def curve_row(labelled: LabelledLibrary, half: str, ranked: Ranked) -> str:
    p = measure(labelled, half, ranked)
    return (
        f"top-3 {p.top3:.2f}  MRR {p.mrr:.2f}  lost {p.lost:.3f}"
        f"  negatives empty {p.negatives_empty:.2f}"
    )


def min_relevance_ranker(labelled: LabelledLibrary, cut: float) -> Ranked:
    def ranked(q: str) -> list[str]:
        return labelled._searched(SearchQuery(q=q, per_page=evaluation.DEPTH, min_relevance=cut))

    return ranked


def judge_ranker(
    labelled: LabelledLibrary,
    threshold: float,
    memo: dict[str, list[SearchHit]],
    per_query: bool = False,
) -> Ranked:
    """verify=true, then dropping the judged semantic-only hits under `threshold`; with
    `per_query`, dropping all of them when the query's best judged hit is under it (the
    judge doubts everything the meaning side found) and none otherwise."""

    def ranked(q: str) -> list[str]:
        if q not in memo:
            memo[q] = search(labelled.library, SearchQuery(q=q, per_page=50, verify=True))[0]
        judged = [h.verified_relevance for h in memo[q] if h.verified_relevance is not None]
        doubted = per_query and bool(judged) and max(judged) < threshold

        def dropped(hit: SearchHit) -> bool:
            p = hit.verified_relevance
            if hit.match_type != "semantic" or p is None:
                return False
            return doubted if per_query else p < threshold

        return [labelled.key_of[hit.seq] for hit in memo[q] if not dropped(hit)]

    return ranked


def report(labelled: LabelledLibrary, half: str) -> None:
    print(f"== {labelled.set.name}, {half}")
    for cut in MIN_RELEVANCE:
        row = curve_row(labelled, half, min_relevance_ranker(labelled, cut))
        print(f"  min_relevance {cut:.2f}: {row}")
    memo: dict[str, list[SearchHit]] = {}
    for threshold in JUDGE:
        ranker = judge_ranker(labelled, threshold, memo)
        print(f"  verify, drop below {threshold:.2f}: {curve_row(labelled, half, ranker)}")
        ranker = judge_ranker(labelled, threshold, memo, per_query=True)
        row = curve_row(labelled, half, ranker)
        print(f"  verify, drop all when the best is below {threshold:.2f}: {row}")


def main() -> int:
    from fresh_set import FRESH, FRESH_HALF

    evaluation.CACHE_EMBEDDINGS = True
    run = sides if "--sides" in sys.argv else report
    with tempfile.TemporaryDirectory() as tmp, labelled_library(Path(tmp), 0, MAIN) as labelled:
        for half in ("tuning", "heldout"):
            run(labelled, half)
    with tempfile.TemporaryDirectory() as tmp, labelled_library(Path(tmp), 0, FRESH) as labelled:
        run(labelled, FRESH_HALF)
    return 0


# --- finer: the chance each side's cut keeps, the English model and the multilingual one ---

CHANCES = [0.012, 0.015, 0.02, 0.025, 0.03, 0.04]
SIDE_CHANCES = [(0.012, 0.03), (0.012, 0.1), (0.02, 0.012), (0.03, 0.012), (0.05, 0.012)]


def stricter(curve: Any, chance: float) -> Any:
    """`curve` moved so that the default cut keeps only matches of at least `chance`."""
    shift = math.log(chance / (1 - chance)) - math.log(
        calibration.RELEVANT_AT_DEFAULT / (1 - calibration.RELEVANT_AT_DEFAULT)
    )
    return calibration.Calibration(bias=curve.bias - shift, slope=curve.slope)


def sides(labelled: LabelledLibrary, half: str) -> None:
    from screvi_mcp.local.search import multilingual_index
    from screvi_mcp.local.search.registry import semantic_index_for

    index = semantic_index_for(labelled.library)
    english, same, cross = (
        index.calibration,  # type: ignore[union-attr]
        multilingual_index.MULTILINGUAL_SAME,
        multilingual_index.MULTILINGUAL_CROSS,
    )
    print(f"== {labelled.set.name}, {half}: chance kept by the default cut")
    settings = [] if "--only-sides" in sys.argv else [(c, c) for c in CHANCES]
    settings += SIDE_CHANCES
    try:
        for english_chance, other_chance in settings:
            index.calibration = stricter(english, english_chance)  # type: ignore[union-attr]
            multilingual_index.MULTILINGUAL_SAME = stricter(same, other_chance)
            multilingual_index.MULTILINGUAL_CROSS = stricter(cross, other_chance)
            labelled.forget()
            row = curve_row(labelled, half, min_relevance_ranker(labelled, 0.72))
            print(f"  English {english_chance:.3f}, multilingual {other_chance:.3f}: {row}")
    finally:
        index.calibration = english  # type: ignore[union-attr]
        multilingual_index.MULTILINGUAL_SAME, multilingual_index.MULTILINGUAL_CROSS = same, cross
        labelled.forget()


if __name__ == "__main__":
    sys.exit(main())
