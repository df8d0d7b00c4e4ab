"""Speed settings of search that must not change what it finds (docs/benchmarks.md, issue 30)."""

from __future__ import annotations

import pytest

from screvi_mcp.local.storage.library import Library


def test_attaching_an_index_leaves_numpy_blas_on_one_thread(semantic_library: Library) -> None:
    # Several BLAS threads spin against the search's other side on a 2-core machine
    # (blas_threads.py); one thread gives the same scores.
    threadpoolctl = pytest.importorskip("threadpoolctl")
    blas = [info for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]
    assert blas, "numpy's BLAS should be loaded once an index is attached"
    assert {info["num_threads"] for info in blas} == {1}
