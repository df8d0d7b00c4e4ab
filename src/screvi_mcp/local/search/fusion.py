"""Reciprocal rank fusion of the keyword and the semantic rankings.

RRF (Cormack et al. 2009) adds 1 / (k + rank) over the lists a document appears in. It needs
no score normalisation, which matters here: bm25 and cosine live on unrelated scales. k=60 is
the published default and what DESIGN.md's offline checks used.
"""

from __future__ import annotations

from typing import NamedTuple

RRF_K = 60


# Named tuples, not dataclasses: a search builds one per candidate (up to a thousand per
# side at 100k), and a frozen dataclass took about 4x as long to build (measured).
class SemanticMatch(NamedTuple):
    seq: int
    cosine: float  # the model's raw cosine
    similarity: float  # the cosine calibrated onto the hosted service's scale


class FusedHit(NamedTuple):
    seq: int
    relevance: float
    semantic: SemanticMatch | None
    keyword_rank: int | None  # 1-based
    # Found through the source or author the query names, below the semantic cut: a match
    # on the source's title or author words, reported as a keyword match (no similarity).
    by_source: bool = False

    @property
    def match_type(self) -> str:
        keyword = self.keyword_rank is not None or self.by_source
        if self.semantic is not None and keyword:
            return "both"
        return "semantic" if self.semantic is not None else "keyword"


def reciprocal_rank_fusion(
    keyword: list[int],
    semantic: list[SemanticMatch],
    k: int = RRF_K,
    later: list[SemanticMatch] | None = None,
    later_places: list[int] | None = None,
) -> list[FusedHit]:
    """Both rankings merged, best first; ties go to the hit holding the query's words, then
    to the higher cosine, then to the better keyword rank.

    `later` is a further semantic ranking (the multilingual model's non-English matches for
    an English query, multilingual.py), each entry counted at its place in `later_places`
    (by default 1, 2, 3...); a highlight in both semantic lists counts its better place once
    and reports the first list's scores.
    """
    # Both semantic lists are one side seen by two models: a highlight gets the better of
    # its two places, not two votes (a French highlight deep in MiniLM's noise would
    # otherwise overtake MiniLM's best English match), and the first list's scores.
    semantic_place: dict[int, tuple[int, SemanticMatch]] = {}
    later = later or []
    places = later_places if later_places is not None else range(1, len(later) + 1)
    for rank, match in zip(places, later, strict=True):
        semantic_place[match.seq] = (rank, match)
    for rank, match in enumerate(semantic, start=1):
        other = semantic_place.get(match.seq)
        semantic_place[match.seq] = (rank if other is None else min(rank, other[0]), match)
    keyword_rank = {seq: rank for rank, seq in enumerate(keyword, start=1)}
    no_keyword_rank = len(keyword) + 1
    # A sort key per hit, built once: (-score, outside the keyword list, -cosine or 1 for
    # none, keyword rank, order of first appearance: keyword list, then semantic, then
    # later), which settles full ties as a stable sort would. Up to 2,000 hits at 100k:
    # the loop is kept lean (tuple.__new__ skips the named tuple's Python-level __new__).
    order = dict.fromkeys(
        [*keyword, *(match.seq for match in semantic), *(match.seq for match in later)]
    )
    # At equal fused scores the query's own words are the firmer evidence (the second key,
    # False for a hit in the keyword list): a non-English match sharing the top place with a
    # tag or name match went first by its raw cosine, on another model's scale (tuning top-3
    # 0.84 -> 0.86, blind MRR 0.94 -> 0.96, docs/search.md).
    new_hit, rank_of, place_of = tuple.__new__, keyword_rank.get, semantic_place.get
    keys: list[tuple[float, bool, float, int, int]] = []
    hits: list[FusedHit] = []
    for position, seq in enumerate(order):
        k_rank = rank_of(seq)
        place = place_of(seq)
        if place is None:  # in the keyword list only (k_rank is set)
            score = 1.0 / (k + k_rank)  # type: ignore[operator]
            keys.append((-score, False, 1.0, k_rank, position))  # type: ignore[arg-type]
            hits.append(new_hit(FusedHit, (seq, score, None, k_rank, False)))
            continue
        rank, chosen = place
        if k_rank is None:
            score = 0.0 + 1.0 / (k + rank)
            keys.append((-score, True, -chosen.cosine, no_keyword_rank, position))
        else:
            score = 1.0 / (k + k_rank) + 1.0 / (k + rank)
            keys.append((-score, False, -chosen.cosine, k_rank, position))
        hits.append(new_hit(FusedHit, (seq, score, chosen, k_rank, False)))
    keys.sort()
    return [hits[key[4]] for key in keys]


def lead_with_source(
    fused: list[FusedHit], in_source: list[SemanticMatch], lead: int, min_similarity: float
) -> list[FusedHit]:
    """The named source's best `lead` highlights first, then the rest of `fused`.

    Used for a query that names a source: `in_source` ranks that source's highlights by the
    query's topic alone. They are ordered by RRF over that ranking and their place in the
    normal fused list (which saw the whole question), those matching every keyword first
    (they have the topic's very words). Relevance stays decreasing down the list. One below
    `min_similarity` is returned as what it is, a match on the source's name (`by_source`),
    with no similarity.
    """
    if not in_source:
        return fused
    position = {hit.seq: rank for rank, hit in enumerate(fused, start=1)}
    by_seq = {hit.seq: hit for hit in fused}
    beyond = len(fused) + len(in_source) + 1

    def order(item: tuple[int, SemanticMatch]) -> tuple[bool, float]:
        topic_rank, match = item
        had = by_seq.get(match.seq)
        combined = 1.0 / (RRF_K + topic_rank) + 1.0 / (RRF_K + position.get(match.seq, beyond))
        return (had is None or had.keyword_rank is None, -combined)

    chosen = [match for _, match in sorted(enumerate(in_source, start=1), key=order)][:lead]
    ceiling = max((hit.relevance for hit in fused), default=0.0)
    first: list[FusedHit] = []
    for rank, match in enumerate(chosen, start=1):
        had = by_seq.get(match.seq)
        semantic: SemanticMatch | None = match
        if had is not None and had.semantic is not None:
            semantic = had.semantic
        elif match.similarity < min_similarity:
            semantic = None
        keyword_rank = had.keyword_rank if had is not None else None
        by_source = semantic is None and keyword_rank is None
        relevance = ceiling + 1.0 / (RRF_K + rank)
        first.append(FusedHit(match.seq, relevance, semantic, keyword_rank, by_source))
    chosen_seqs = {match.seq for match in chosen}
    return first + [hit for hit in fused if hit.seq not in chosen_seqs]
