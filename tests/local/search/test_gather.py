"""The re-score's gather works a slice at a time, a slice sized to stay in L2 whatever the
model's width (vectors.gather_rows): the scores must be bit for bit those of one product
over every candidate, so the slice size never changes a ranking."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from screvi_mcp.local.search.vectors import _gathered_scores, gather_rows  # noqa: E402


@pytest.mark.parametrize("dimensions", [384, 768, 1024])
def test_sliced_gather_scores_are_those_of_one_product(dimensions: int) -> None:
    rng = np.random.default_rng(dimensions)
    vectors = rng.standard_normal((3000, dimensions)).astype(np.float32)
    query = rng.standard_normal(dimensions).astype(np.float32)
    rows = np.sort(rng.choice(3000, size=1000, replace=False))
    expected = np.einsum("ij,j->i", vectors[rows], query)
    assert np.array_equal(_gathered_scores(vectors, rows, query), expected)


def test_slices_hold_the_same_bytes_at_every_width() -> None:
    assert gather_rows(384) == 256  # MiniLM: what was measured first
    assert gather_rows(768) == 128  # all-mpnet-base-v2 and the 1M synthetic library
    assert gather_rows(100_000) == 16  # never a slice of nothing
