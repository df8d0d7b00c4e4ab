"""Synthetic vectors shaped like sentence embeddings, for the scan tests."""

from __future__ import annotations

import numpy as np


def unit_rows(rng: np.random.Generator, count: int, dimensions: int = 384) -> np.ndarray:
    """A shared direction plus noise, so that cosines crowd together (0.2 to 0.7) as
    MiniLM's do, which is where a coarser first pass could swap neighbours."""
    shared = rng.standard_normal(dimensions).astype(np.float32)
    rows = rng.standard_normal((count, dimensions)).astype(np.float32) + 0.8 * shared
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def near_queries(
    rng: np.random.Generator, rows: np.ndarray, count: int, noise: float
) -> list[np.ndarray]:
    """`count` of the rows, each moved a little (by `noise`) and normalised again."""
    picked = rows[rng.choice(rows.shape[0], count, replace=False)]
    noisy = picked + noise * rng.standard_normal(picked.shape).astype(np.float32)
    return list(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
