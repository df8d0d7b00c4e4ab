"""The query-level gate's second opinion: the judge decides the uncertain band.

MiniLM gives a correct paraphrase about the same best cosine (0.28-0.40) as a near-topic
question the library cannot answer, so one cut on the best cosine trades found paraphrases
for empty answers (docs/search.md). For a query whose best match falls in that band, the
verify judge (judge.py: token max-sim, keyword overlap and the margin beside the cosine; a
better ranker than the cosine on held-out pairs) reads the query's few best matches, and the
query keeps its semantic hits if the judge finds one of them relevant enough.

Only `GATE_JUDGED` texts are judged, and only for queries in the band, so the cost is one
MiniLM pass over a handful of short texts on those queries alone.
"""

from __future__ import annotations

import sqlite3
from typing import Protocol

from screvi_mcp.local.search.fusion import SemanticMatch

# The best matches the judge reads for a query in the uncertain band. On the tuning half 2,
# 3 and 5 decided alike (1 was 0.002 worse); each text costs a MiniLM pass (about 15 ms of
# CPU for a short highlight on these machines), so the fewest that decide as well.
GATE_JUDGED = 2


class JudgedSide(Protocol):
    def gate_judge_threshold(self, best_cosine: float, min_relevance: float) -> float | None: ...

    def verify(
        self, conn: sqlite3.Connection, text: str, matches: list[SemanticMatch]
    ) -> dict[int, float]: ...


def judge_admits(
    side: JudgedSide,
    conn: sqlite3.Connection,
    text: str,
    matches: list[SemanticMatch],
    min_relevance: float,
) -> bool:
    """Whether a query that missed the cosine gate still gets its semantic hits."""
    if not matches:
        return False
    threshold = side.gate_judge_threshold(matches[0].cosine, min_relevance)
    if threshold is None:
        return False
    judged = side.verify(conn, text, matches[:GATE_JUDGED])
    return max(judged.values(), default=0.0) >= threshold
