"""The benchmark stays runnable: `python -m bench --tiny` runs every section and prints it.

The sections run in groups (tests/testsupport/bench_tiny.py), one test module each, so that
pytest-xdist runs them side by side; this module checks that the groups cover every section
and runs the library group. No timing is asserted: CI machines are shared and noisy; the
figures live in the README.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testsupport.bench_tiny import GROUPS, bench_sections, run_group

pytestmark = pytest.mark.bench

pytest.importorskip("tiktoken", reason="the benchmark counts tokens with tiktoken")


def test_the_groups_run_every_section_once() -> None:
    grouped = [section for sections in GROUPS.values() for section in sections]
    assert sorted(grouped) == sorted(bench_sections())


def test_library_search_ingest_and_verify(tmp_path: Path) -> None:
    results, _ = run_group("library", tmp_path)
    library = results["library"][str(results["sizes"][0])]
    assert library["search_hybrid"]["n"] > 0 and library["ingest"]["embedded"] > 0
    assert library["ingest"]["queue_ratio_to_before"] is not None  # its baseline was measured
    assert results["verify"]
