"""Held-out quality of passage search on the labelled article set, at the shipped default.

Runs the whole pipeline (local site, save, fetch, extract, passages, embed: about 20-40 s).
The figures and the plain ranking beside them are in docs/articles.md; the thresholds are the
issue's (top-3 >= 0.85 with the right passage, negatives empty >= 0.75).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from local.passages.article_evaluation import _site, build, digests, run_queries, score
from local.passages.labelled_articles import ARTICLES
from screvi_mcp.local.passages.search import DEFAULT_MIN_RELEVANCE

pytest.importorskip("numpy", reason="search by meaning needs the local extra")


@pytest.mark.parametrize("long_articles", [False, True], ids=["articles", "digests"])
async def test_heldout_top3_and_negatives_at_the_default_cut(long_articles: bool) -> None:
    """As written, and joined five at a time into digests of 1,000-2,000 words (the right
    passage must then be found inside a long article)."""
    articles, home = digests() if long_articles else (ARTICLES, None)
    with tempfile.TemporaryDirectory() as folder, _site(articles) as base:
        served, lib = await build(Path(folder) / "lib.sqlite3", base, articles)
        try:
            rows = await run_queries(lib, DEFAULT_MIN_RELEVANCE, home)
        finally:
            await lib.client.aclose()
            await served.aclose()
    heldout = score(rows, "heldout")
    assert heldout["top3"] >= 0.85, heldout
    assert heldout["negative"] >= 0.75, heldout
