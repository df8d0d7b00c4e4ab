"""`verified_relevance` is a probability: each judge's output, on the held-out half's judged
pairs (recorded in fixtures/ by `reliability.py --fixture`, so no model runs here), is
calibrated in every bin, and never falls as a piece of evidence rises.

No map sits between a judge and `verified_relevance`: a Platt or isotonic map fitted on the
tuning half lowered no held-out ECE (reliability.py's check; docs/search.md). These tests
hold the judges' weights to that: a refit that is worse calibrated on held-out, or that
lets more evidence lower the probability, fails here. The pairs hold features, not
probabilities: re-record them (`reliability.py --fixture`, once per English model) only
when a model or the judge's signals change.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from reliability import Rows, bins, calibration_error, fixture_path, wilson

from screvi_mcp.local.search.judge import MINILM_JUDGE, JudgeWeights, predict
from screvi_mcp.local.search.mpnet.calibration import MPNET_JUDGE
from screvi_mcp.local.search.multilingual_index import MULTILINGUAL_JUDGE

JUDGES = {
    ("minilm", "english"): MINILM_JUDGE,
    ("mpnet", "english"): MPNET_JUDGE,
    # The spread judge's pairs do not depend on the English model: one fixture holds them.
    ("mpnet", "multilingual"): MULTILINGUAL_JUDGE,
}
# Measured on the fixtures: ECE 0.010-0.017. A bin needs this many pairs for its share to
# say anything (its 95% interval is then narrower than about ±0.35).
MAX_ECE = 0.03
MIN_BIN = 5


def held_out(model: str, side: str, weights: JudgeWeights) -> Rows:
    data = json.loads(fixture_path(model).read_text(encoding="utf-8"))[side]
    probabilities = predict(weights, np.asarray(data["features"], dtype=np.float64))
    return [(float(p), bool(y)) for p, y in zip(probabilities, data["labels"], strict=True)]


@pytest.mark.parametrize(("model", "side"), list(JUDGES))
def test_each_judge_is_calibrated_in_every_bin_on_held_out_pairs(model: str, side: str) -> None:
    rows = held_out(model, side, JUDGES[(model, side)])
    assert sum(r for _, r in rows) >= 15, "too few relevant pairs to judge calibration"
    assert calibration_error(rows) <= MAX_ECE, calibration_error(rows)
    for b in bins(rows):
        if b.n >= MIN_BIN:
            assert b.holds, (b, b.share, b.interval)


@pytest.mark.parametrize(("model", "side"), list(JUDGES))
def test_a_judge_sure_of_itself_fails_the_check(model: str, side: str) -> None:
    """The check above has teeth: the same judge made overconfident (every logit doubled)
    or shifted toward 'relevant' fails it."""
    weights = JUDGES[(model, side)]
    doubled = JudgeWeights(2 * weights.bias, tuple(2 * w for w in weights.weights))
    shifted = JudgeWeights(weights.bias + 1.0, weights.weights)
    for bad in (doubled, shifted):
        rows = held_out(model, side, bad)
        badly = calibration_error(rows) > MAX_ECE or not all(
            b.holds for b in bins(rows) if b.n >= MIN_BIN
        )
        assert badly, bad


@pytest.mark.parametrize("weights", sorted(set(JUDGES.values()), key=str))
def test_more_evidence_never_lowers_the_probability(weights: JudgeWeights) -> None:
    """Every signal (cosine, max-sim, overlap, margin; for the spread judge z, z to the
    best, cosine) counts for relevance: the probability is monotone in each."""
    assert all(w >= 0 for w in weights.weights), weights
    grid = np.linspace(-1.0, 1.0, 21)
    for column in range(len(weights.weights)):
        features = np.zeros((len(grid), len(weights.weights)))
        features[:, column] = grid
        assert np.all(np.diff(predict(weights, features)) >= 0), (weights, column)


def test_the_wilson_interval_of_a_small_bin() -> None:
    # 8 of 15: the share 0.53 is known only to about 0.30-0.75.
    low, high = wilson(8, 15)
    assert low == pytest.approx(0.301, abs=0.001) and high == pytest.approx(0.752, abs=0.001)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
