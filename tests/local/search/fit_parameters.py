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

from evaluation import LabelledLibrary, labelled_library, score
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


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp, labelled_library(Path(tmp)) as labelled:
        fit(labelled)
    sys.exit(0)
