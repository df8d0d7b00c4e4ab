"""`python -m bench --tiny`, embedding speed and a million highlights' search, at toy size
(see test_bench_tiny.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testsupport.bench_tiny import run_group

pytestmark = pytest.mark.bench

pytest.importorskip("tiktoken", reason="the benchmark counts tokens with tiktoken")


def test_embedding_and_million(tmp_path: Path) -> None:
    results, _ = run_group("embedding", tmp_path)
    candidate = results["embedding"]["minilm-int8-down"]  # MiniLM against its int8 build
    assert candidate["against_baseline"]["cpu_speedup"] > 0
    assert results["embedding"]["findable"]["english_only"]["findable_50k_seconds"] > 0
    assert results["million"]["recall"]["top_100_mean"] > 0.9  # every row a candidate here
