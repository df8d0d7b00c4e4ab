"""`python -m bench --tiny`, the streamable HTTP section (see test_bench_tiny.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testsupport.bench_tiny import run_group

pytestmark = pytest.mark.bench

pytest.importorskip("tiktoken", reason="the benchmark counts tokens with tiktoken")


def test_http_load(tmp_path: Path) -> None:
    results, _ = run_group("http", tmp_path)
    assert results["http"]["screvi"]["calls"] > 0 and results["http"]["screvi"]["errors"] == 0
    assert results["http"]["minimal"]["calls"] > 0  # the baseline
    scale = results["http"]["scale_out"]
    assert scale["embedded_2_workers"]["calls"] > 0 and scale["hosted_1_worker"]["calls"] > 0
