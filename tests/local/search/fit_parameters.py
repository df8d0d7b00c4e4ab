"""Fits search's thresholds on the TUNING half of the labelled set (never the held-out one).

    .venv/bin/python tests/local/search/fit_parameters.py

Prints, for a grid of per-hit floors, query gates (raw cosines of the default model) and
judge thresholds for the uncertain band below the gate (query_gate.py; the band starts at
`calibration.MINILM.uncertain_from`), hybrid top-3, MRR and the share of negatives returning
nothing, and the setting chosen by the rule below. The chosen values are written into
`calibration.MINILM` and `judge.MINILM_JUDGE` by hand, with the figures in docs/search.md.

With `SCREVI_ENGLISH_MODEL=mpnet` it fits the opt-in model instead (its own grid below,
uncertain bands included; values go to `mpnet/calibration.py`). `--judge` fits the verify
judge's weights on the attached model's token vectors, then verify's cut. `--best-gap` fits
`Calibration.best_gap` (how far below a query's best match its matches are kept) with the
other values as they are.

Rule: maximise top-3 + MRR + 2 x (share of negatives returning nothing). Returning nothing
for a question the library cannot answer counts as much as finding a paraphrase. Among
settings within 0.005 of the best objective, the one that finds the most of all relevant
highlights in the first 10 results wins (the floor's whole purpose: the measures above see
only the first relevant hit), then the strictest floor, gate and judge threshold (fewer
noise hits in the results, which these measures do not see).
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluation import (
    LabelledLibrary,
    auc,
    first_page,
    judged_pairs,
    labelled_library,
    score,
)
from labelled_set import NEGATIVES_BY_HALF, QUERIES_BY_HALF

from screvi_mcp.local.search.calibration import MINILM, Calibration
from screvi_mcp.local.search.registry import semantic_index_for

# The grid of the 2026-11-23 refit on the grown tuning half (coarser than the first fit's
# 504 points, which takes half an hour on two loaded cores; higher gates added, since the
# new near-topic negatives reach MiniLM cosines of 0.40 and more).
FLOORS = [0.18, 0.20, 0.24, 0.28, 0.33]
GATES = [0.34, 0.36, 0.38, 0.40, 0.42, 0.45, 0.48]
# 1.01: the judge never admits a query below the gate (the cosine gate alone).
GATE_JUDGE_THRESHOLDS = [0.2, 0.3, 0.5, 1.01]
RECALL_DEPTH = 10
# mpnet's grid (2026-11-25): its cosines run higher than MiniLM's. MPNET_BANDS: where its
# judge's band below the gate starts (the judge threshold 1.01 of the grid is "no band").
MPNET_FLOORS = [0.30, 0.35, 0.40]
MPNET_GATES = [0.44, 0.48, 0.52, 0.56]
MPNET_BANDS = [0.34, 0.38, 0.42]


def with_thresholds(
    floor: float, gate: float, base: Calibration = MINILM, band: float | None = None
) -> Calibration:
    calibration = dataclasses.replace(base, raw=(0.0, floor, 0.80, 1.0), gate=gate)
    return calibration if band is None else dataclasses.replace(calibration, uncertain_from=band)


def recall(labelled: LabelledLibrary, queries: list[Any]) -> float:
    """Share of all relevant highlights found in the first RECALL_DEPTH results, averaged."""
    found = [
        len(set(labelled.hybrid(q.q)[:RECALL_DEPTH]) & set(q.relevant)) / len(q.relevant)
        for q in queries
    ]
    return sum(found) / len(found)


def fit(
    labelled: LabelledLibrary,
    half: str = "tuning",
    floors: list[float] = FLOORS,
    gates: list[float] = GATES,
    band: float | None = None,
) -> tuple[float, float, float]:
    """The grid for the attached model (`band`: where its judge's band starts, None to keep
    the model's own)."""
    index = semantic_index_for(labelled.library)
    assert index is not None
    original = index.calibration  # type: ignore[attr-defined]
    verifier = index.verifier  # type: ignore[attr-defined]
    original_gate_threshold = verifier.gate_threshold
    queries, negatives = QUERIES_BY_HALF[half], NEGATIVES_BY_HALF[half]
    results: list[tuple[float, float, float, float, float]] = []
    with _memoised_sides(index):
        try:
            for floor in floors:
                for gate in gates:
                    if gate < floor:
                        continue
                    index.calibration = with_thresholds(  # type: ignore[attr-defined]
                        floor, gate, original, band
                    )
                    for judged in GATE_JUDGE_THRESHOLDS:
                        verifier.gate_threshold = judged
                        s = score(labelled.hybrid, queries)
                        empty = sum(not labelled.hybrid(q) for q, _ in negatives) / len(negatives)
                        objective = s.top3 + s.mrr + 2 * empty
                        print(
                            f"floor {floor:.2f} gate {gate:.2f} judge {judged:.2f}:"
                            f" top-3 {s.top3:.3f} MRR {s.mrr:.3f} negatives empty"
                            f" {empty:.2f}  objective {objective:.3f}"
                        )
                        results.append((objective, 0.0, floor, gate, judged))
            top = max(r[0] for r in results)
            near = []
            for objective, _, floor, gate, judged in results:
                if objective >= top - 0.005:
                    index.calibration = with_thresholds(  # type: ignore[attr-defined]
                        floor, gate, original, band
                    )
                    verifier.gate_threshold = judged
                    near.append((objective, recall(labelled, queries), floor, gate, judged))
        finally:
            index.calibration = original  # type: ignore[attr-defined]
            verifier.gate_threshold = original_gate_threshold
    best = max(near, key=lambda r: (round(r[1], 3), r[2], r[3], r[4]))
    print(
        f"chosen: floor {best[2]:.2f}, gate {best[3]:.2f}, judge in the band {best[4]:.2f}"
        f" (objective {best[0]:.3f}, recall@{RECALL_DEPTH} {best[1]:.3f})"
    )
    return best[2], best[3], best[4]


# Gaps below the best match tried for `Calibration.best_gap` (None: no cut).
BEST_GAPS: list[float | None] = [None, 0.10, 0.15, 0.20, 0.25, 0.30]


def fit_best_gap(labelled: LabelledLibrary, half: str = "tuning") -> float | None:
    """The smallest gap below the best match that costs nothing measured: the first page
    finds as many relevant highlights as with no cut, and top-3, MRR and negatives are as
    good. What it buys is fewer results no label calls relevant (printed)."""
    index = semantic_index_for(labelled.library)
    assert index is not None
    original = index.calibration  # type: ignore[attr-defined]
    queries, negatives = QUERIES_BY_HALF[half], NEGATIVES_BY_HALF[half]
    rows = []
    try:
        for gap in BEST_GAPS:
            index.calibration = dataclasses.replace(original, best_gap=gap)  # type: ignore[attr-defined]
            s = score(labelled.hybrid, queries)
            empty = sum(not labelled.hybrid(q) for q, _ in negatives) / len(negatives)
            page = first_page(labelled, half)
            found, unlabelled = page.relevant_found, page.unlabelled
            objective = s.top3 + s.mrr + 2 * empty
            print(
                f"best gap {gap}: top-3 {s.top3:.3f} MRR {s.mrr:.3f} negatives empty"
                f" {empty:.2f} objective {objective:.3f}; first page: relevant found"
                f" {found:.3f}, not labelled relevant {unlabelled:.2f} per query"
            )
            rows.append((gap, objective, found))
    finally:
        index.calibration = original  # type: ignore[attr-defined]
    _, objective_uncut, found_uncut = rows[0]
    costless = [
        gap
        for gap, objective, found in rows[1:]
        if gap is not None
        and objective >= objective_uncut - 0.005
        and found >= found_uncut - 0.0005
    ]
    chosen = min(costless) if costless else None
    print(f"chosen best gap: {chosen}")
    return chosen


@contextlib.contextmanager
def _memoised_sides(index: Any) -> Iterator[None]:
    """The keyword side, the named-source side and the judge do not depend on the
    thresholds being fitted: compute each once per query, so the grid runs in minutes."""
    from screvi_mcp.local.search import engine

    keyword, named, real_verify = engine.keyword_ranking, engine.named_source_side, index.verify
    keyword_memo: dict[Any, Any] = {}
    named_memo: dict[Any, Any] = {}
    verify_memo: dict[Any, Any] = {}

    def memo_keyword(conn: Any, text: str, filters: Any, limit: int) -> Any:
        key = (text, filters, limit)
        if key not in keyword_memo:
            keyword_memo[key] = keyword(conn, text, filters, limit)
        return keyword_memo[key]

    def memo_named(library: Any, query: Any) -> Any:
        if query not in named_memo:
            named_memo[query] = named(library, query)
        return named_memo[query]

    def memo_verify(conn: Any, text: str, matches: list[Any]) -> Any:
        key = (text, tuple(m.seq for m in matches))
        if key not in verify_memo:
            verify_memo[key] = real_verify(conn, text, matches)
        return verify_memo[key]

    engine.keyword_ranking = memo_keyword  # type: ignore[assignment]
    engine.named_source_side = memo_named  # type: ignore[assignment]
    index.verify = memo_verify
    try:
        yield
    finally:
        engine.keyword_ranking = keyword  # type: ignore[assignment]
        engine.named_source_side = named  # type: ignore[assignment]
        del index.verify


def fit_judge(labelled: LabelledLibrary, half: str = "tuning") -> None:
    """Logistic regression of relevance on the judge's features, tuning pairs only."""
    from screvi_mcp.local.search.judge import FEATURES, predict
    from screvi_mcp.local.search.judge import fit as fit_weights

    pairs = judged_pairs(labelled, half)
    weights = fit_weights(pairs.features, pairs.labels)
    rounded = dataclasses.replace(
        weights,
        bias=round(weights.bias, 2),
        weights=tuple(round(w, 2) for w in weights.weights),
    )
    print(f"{len(pairs.labels)} pairs, {int(pairs.labels.sum())} relevant; features {FEATURES}")
    print(f"fitted: {rounded}")
    print(
        f"tuning AUC: cosine {auc(pairs.features[:, 0], pairs.labels):.3f},"
        f" judge {auc(predict(rounded, pairs.features), pairs.labels):.3f}"
    )


VERIFY_THRESHOLDS = [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5]


def fit_verify_threshold(labelled: LabelledLibrary, half: str = "tuning") -> float:
    """The judge's cut for verify=true, by the same rule as the thresholds above."""
    index = semantic_index_for(labelled.library)
    assert index is not None
    judged: dict[tuple[str, tuple[int, ...]], dict[int, float]] = {}
    real_verify = index.verify

    def memo_verify(conn: Any, text: str, matches: list[Any]) -> dict[int, float]:
        key = (text, tuple(m.seq for m in matches))
        if key not in judged:
            judged[key] = real_verify(conn, text, matches)
        return judged[key]

    index.verify = memo_verify  # type: ignore[method-assign]
    verifier = index.verifier  # type: ignore[attr-defined]
    queries, negatives = QUERIES_BY_HALF[half], NEGATIVES_BY_HALF[half]
    results = []
    try:
        for threshold in VERIFY_THRESHOLDS:
            verifier.threshold = threshold
            s = score(labelled.hybrid_verify, queries)
            empty = sum(not labelled.hybrid_verify(q) for q, _ in negatives) / len(negatives)
            objective = s.top3 + s.mrr + 2 * empty
            print(
                f"verify threshold {threshold:.2f}: top-3 {s.top3:.3f} MRR {s.mrr:.3f}"
                f" negatives empty {empty:.2f}  objective {objective:.3f}"
            )
            results.append((objective, threshold))
    finally:
        del index.verify
    top = max(objective for objective, _ in results)
    chosen = max(t for objective, t in results if objective >= top - 0.005)
    print(f"chosen verify threshold: {chosen}")
    return chosen


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp, labelled_library(Path(tmp)) as labelled:
        from screvi_mcp.local.search.mpnet import MPNET, english_model

        if "--best-gap" in sys.argv:
            fit_best_gap(labelled)
        elif "--judge" in sys.argv:
            fit_judge(labelled)
            fit_verify_threshold(labelled)
        elif english_model() == MPNET:
            for band in MPNET_BANDS:
                print(f"--- mpnet, the judge's band from {band}")
                fit(labelled, floors=MPNET_FLOORS, gates=MPNET_GATES, band=band)
        else:
            fit(labelled)
    sys.exit(0)
