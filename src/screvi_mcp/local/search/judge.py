"""The default relevance judge behind `verify=true`: a small logistic model over several
signals, so that `verified_relevance` is evidence beyond the first-stage cosine.

Signals for a (query, highlight) pair:

- `cosine`: the embedding cosine search already ranked by;
- `maxsim`: for each content token of the query, its best match among the highlight's
  tokens (contextual token vectors from the bundled MiniLM whichever model ranks, as many
  layers as the weights were fitted on, cached per text: judge_tokens.py), averaged: a
  late-interaction score that sees *which* words line up, which one pooled vector blurs;
- `overlap`: the share of the query's content words the highlight contains (as words
  sharing their first five letters, so "simply" meets "simplicity");
- `margin`: the pair's cosine minus the best cosine among the query's judged matches (a
  match far below the query's best is rarely the answer).

Weights are fitted by logistic regression on the TUNING half of the labelled set
(tests/local/search/fit_calibration.py --judge), and the probability is `verified_relevance`
as is: a Platt or isotonic map fitted on the same tuning hits lowered no held-out ECE
(tests/local/search/reliability.py). test_verify_calibration.py holds every judge calibrated
on recorded held-out pairs, with no weight below 0 (more evidence never lowers it);
docs/search.md has the reliability tables. A cross-encoder (`SCREVI_VERIFIER_MODEL_DIR`)
replaces this judge when configured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from screvi_mcp.local.search import judge_tokens
from screvi_mcp.local.search.keyword import words
from screvi_mcp.local.search.stopwords import STOPWORDS

FEATURES = ("cosine", "maxsim", "overlap", "margin")
_STEM = 5

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class JudgeWeights:
    bias: float
    weights: tuple[float, ...]  # one per FEATURES entry
    # How many of the bundled MiniLM's layers give the max-sim's token vectors: part of the
    # evidence the weights were fitted on (judge_tokens.py).
    token_layers: int = judge_tokens.MINILM_LAYERS


# Fitted on the matches verify=true judges for tuning queries at default parameters (793,
# 66 relevant; fit_calibration.py --judge), so that the probability is calibrated where an
# agent reads it; docs/search.md has the held-out reliability table.
MINILM_JUDGE = JudgeWeights(bias=-6.01, weights=(4.92, 6.98, 0.2, 11.94))


class JudgeVerifier:
    def __init__(
        self,
        weights: JudgeWeights = MINILM_JUDGE,
        tokens: judge_tokens.TokenCache | None = None,
    ) -> None:
        self.weights = weights
        self.tokens = tokens if tokens is not None else judge_tokens.cache_for(weights.token_layers)

    def probabilities(self, query: str, passages: list[str], cosines: list[float]) -> list[float]:
        if not passages:
            return []
        return [float(p) for p in predict(self.weights, self.features(query, passages, cosines))]

    def features(self, query: str, passages: list[str], cosines: list[float]) -> Matrix:
        """One row per passage, columns as in FEATURES."""
        token_sets = self.tokens.token_vectors([query, *passages])
        query_tokens, query_vectors = token_sets[0]
        keep = [i for i, token in enumerate(query_tokens) if _content_token(token)]
        query_vectors = query_vectors[keep] if keep else query_vectors
        query_words = [w for w in words(query) if w not in STOPWORDS] or words(query)
        best = max(cosines)
        rows = np.zeros((len(passages), len(FEATURES)))
        for row, (passage, (_, vectors), cosine) in enumerate(
            zip(passages, token_sets[1:], cosines, strict=True)
        ):
            if len(vectors) and len(query_vectors):
                maxsim = float((query_vectors @ vectors.T).max(axis=1).mean())
            else:
                maxsim = 0.0
            stems = {w[:_STEM] for w in words(passage)}
            overlap = (
                sum(w[:_STEM] in stems for w in query_words) / len(query_words)
                if query_words
                else 0.0
            )
            rows[row] = (cosine, maxsim, overlap, cosine - best)
        return rows


def predict(weights: JudgeWeights, features: Matrix) -> npt.NDArray[np.float64]:
    logits = weights.bias + features @ np.asarray(weights.weights)
    result: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-logits))
    return result


def fit(features: Matrix, labels: npt.NDArray[np.float64], l2: float = 0.01) -> JudgeWeights:
    """Logistic regression by Newton's method (a few hundred rows, four features)."""
    x = np.hstack([np.ones((len(features), 1)), features])
    beta = np.zeros(x.shape[1])
    penalty = l2 * np.eye(x.shape[1])
    penalty[0, 0] = 0.0  # the bias is not shrunk
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (p - labels) + penalty @ beta
        hessian = (x * (p * (1 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return JudgeWeights(float(beta[0]), tuple(float(b) for b in beta[1:]))


def _content_token(token: str) -> bool:
    bare = token.removeprefix("##")
    return bare.isalnum() and bare.lower() not in STOPWORDS
