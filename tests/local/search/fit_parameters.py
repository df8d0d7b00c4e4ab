"""Fits search's thresholds on the TUNING half of the labelled set (never the held-out one).

    .venv/bin/python tests/local/search/fit_parameters.py

Prints, for a grid of per-hit floors and query gates (raw cosines of the default model),
hybrid top-3, MRR and the share of negatives returning nothing, and the pair chosen by the
rule below. The chosen values are written into `calibration.MINILM` by hand, with the
figures in docs/search.md.

Rule: maximise top-3 + MRR + 2 x (share of negatives returning nothing). Returning nothing
for a question the library cannot answer counts as much as finding a paraphrase. Among pairs
within 0.005 of the best objective, the strictest floor wins, then the strictest gate (fewer
noise hits in the results, which these measures do not see).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from pathlib import Path
from typing import Any

from evaluation import LabelledLibrary, auc, judged_pairs, labelled_library, score
from labelled_set import NEGATIVES_BY_HALF, QUERIES_BY_HALF

from screvi_mcp.local.search.calibration import MINILM, Calibration
from screvi_mcp.local.search.registry import semantic_index_for

FLOORS = [0.18, 0.20, 0.22, 0.24, 0.26, 0.28, 0.30, 0.33]
GATES = [0.30, 0.32, 0.34, 0.35, 0.36, 0.37, 0.38, 0.40, 0.42]


def with_thresholds(floor: float, gate: float) -> Calibration:
    return dataclasses.replace(MINILM, raw=(0.0, floor, 0.80, 1.0), gate=gate)


def fit(labelled: LabelledLibrary, half: str = "tuning") -> tuple[float, float]:
    index = semantic_index_for(labelled.library)
    assert index is not None
    original = index.calibration  # type: ignore[attr-defined]
    queries, negatives = QUERIES_BY_HALF[half], NEGATIVES_BY_HALF[half]
    results: list[tuple[float, float, float]] = []
    try:
        for floor in FLOORS:
            for gate in GATES:
                if gate < floor:
                    continue
                index.calibration = with_thresholds(floor, gate)  # type: ignore[attr-defined]
                s = score(labelled.hybrid, queries)
                empty = sum(not labelled.hybrid(q) for q, _ in negatives) / len(negatives)
                objective = s.top3 + s.mrr + 2 * empty
                print(f"floor {floor:.2f} gate {gate:.2f}: top-3 {s.top3:.3f} MRR {s.mrr:.3f}"
                      f" negatives empty {empty:.2f}  objective {objective:.3f}")
                results.append((objective, floor, gate))
    finally:
        index.calibration = original  # type: ignore[attr-defined]
    top = max(objective for objective, _, _ in results)
    best = max((r for r in results if r[0] >= top - 0.005), key=lambda r: (r[1], r[2]))
    print(f"chosen: floor {best[1]:.2f}, gate {best[2]:.2f}")
    return best[1], best[2]


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
    print(f"tuning AUC: cosine {auc(pairs.features[:, 0], pairs.labels):.3f},"
          f" judge {auc(predict(rounded, pairs.features), pairs.labels):.3f}")


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
            print(f"verify threshold {threshold:.2f}: top-3 {s.top3:.3f} MRR {s.mrr:.3f}"
                  f" negatives empty {empty:.2f}  objective {objective:.3f}")
            results.append((objective, threshold))
    finally:
        del index.verify
    top = max(objective for objective, _ in results)
    chosen = max(t for objective, t in results if objective >= top - 0.005)
    print(f"chosen verify threshold: {chosen}")
    return chosen


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp, labelled_library(Path(tmp)) as labelled:
        if "--judge" in sys.argv:
            fit_judge(labelled)
            fit_verify_threshold(labelled)
        else:
            fit(labelled)
    sys.exit(0)
