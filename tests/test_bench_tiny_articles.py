"""`python -m bench --tiny`, articles, English models, Kindle import (see test_bench_tiny.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testsupport.bench_tiny import run_group

pytestmark = pytest.mark.bench

pytest.importorskip("tiktoken", reason="the benchmark counts tokens with tiktoken")


def test_articles_english_models_and_import(tmp_path: Path) -> None:
    results, _ = run_group("articles", tmp_path)
    english = results["english_models"]  # mpnet is measured only where its wheels are installed
    assert english["minilm"]["dimensions"] == 384 and english["minilm"]["query_cpu"]["n"] > 0
    assert "skipped" in english["mpnet"] or english["mpnet"]["dimensions"] == 768
    articles = results["articles"]
    assert articles["build"]["passages"] > 0 and articles["search"]["shipped"]["n"] > 0
    assert articles["search"]["baseline_float32_scan"]["n"] > 0
    assert results["import"]["count"] == 50 and results["import"]["rerun_new"] == 0
    assert "library" not in results and results["sizes"]  # no generated library was needed
