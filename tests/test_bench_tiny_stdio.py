"""`python -m bench --tiny`, cold start and the cost of a tool call (see test_bench_tiny.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testsupport.bench_tiny import run_group

pytestmark = pytest.mark.bench

pytest.importorskip("tiktoken", reason="the benchmark counts tokens with tiktoken")


def test_cold_start_and_tool_call(tmp_path: Path) -> None:
    results, _ = run_group("stdio", tmp_path)
    cold = results["cold_start"]
    assert cold["imports"]["hosted_imports_no_local_stack"] is True
    assert cold["variants"]["minimal"]["p50_ms"] > 0  # the baseline
    assert cold["variants"]["screvi_embedded"]["ratio_to_minimal"] is not None
    calls = results["tool_call"]
    assert calls["mcp_stdio"]["n"] > 0 and calls["local_service"]["n"] > 0
