"""Reciprocal rank fusion of the keyword and the semantic rankings.

RRF (Cormack et al. 2009) adds 1 / (k + rank) over the lists a document appears in. It needs
no score normalisation, which matters here: bm25 and cosine live on unrelated scales. k=60 is
the published default and what DESIGN.md's offline checks used.
"""

from __future__ import annotations

from dataclasses import dataclass

RRF_K = 60


@dataclass(frozen=True)
class SemanticMatch:
    seq: int
    cosine: float  # the model's raw cosine
    similarity: float  # the cosine calibrated onto the hosted service's scale


@dataclass(frozen=True)
class FusedHit:
    seq: int
    relevance: float
    semantic: SemanticMatch | None
    keyword_rank: int | None  # 1-based

    @property
    def match_type(self) -> str:
        if self.semantic is not None and self.keyword_rank is not None:
            return "both"
        return "semantic" if self.semantic is not None else "keyword"


def reciprocal_rank_fusion(
    keyword: list[int], semantic: list[SemanticMatch], k: int = RRF_K
) -> list[FusedHit]:
    """Both rankings merged, best first; ties broken by cosine, then by keyword rank."""
    keyword_rank = {seq: rank for rank, seq in enumerate(keyword, start=1)}
    semantic_rank = {match.seq: (rank, match) for rank, match in enumerate(semantic, start=1)}
    hits: list[FusedHit] = []
    for seq in dict.fromkeys([*keyword, *(match.seq for match in semantic)]):
        score = 0.0
        k_rank = keyword_rank.get(seq)
        if k_rank is not None:
            score += 1.0 / (k + k_rank)
        s_entry = semantic_rank.get(seq)
        if s_entry is not None:
            score += 1.0 / (k + s_entry[0])
        hits.append(FusedHit(seq, score, s_entry[1] if s_entry else None, k_rank))
    hits.sort(
        key=lambda hit: (
            -hit.relevance,
            -(hit.semantic.cosine if hit.semantic else -1.0),
            hit.keyword_rank or len(keyword) + 1,
        )
    )
    return hits
