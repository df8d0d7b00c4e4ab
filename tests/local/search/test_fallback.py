"""Without the `local` extra, search is keyword-only and says so once on stderr."""

from __future__ import annotations

import logging
import sys

import pytest
from search_rows import LibraryRows

from screvi_mcp.local.search import attach
from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.storage.library import Library


@pytest.fixture
def without_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make numpy, onnxruntime and tokenizers unimportable, as on a plain install."""
    for name in list(sys.modules):
        if name.split(".")[0] in ("numpy", "onnxruntime", "tokenizers") or name.startswith(
            (
                "screvi_mcp.local.search.index",
                "screvi_mcp.local.search.embedder",
                "screvi_mcp.local.search.vectors",
                "screvi_mcp.local.search.verifier",
                "screvi_mcp.local.search.calibration",
                "screvi_mcp.local.search.embedding_rows",
            )
        ):
            monkeypatch.delitem(sys.modules, name)
    for name in ("numpy", "onnxruntime", "tokenizers"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    monkeypatch.setattr(attach, "_warned", set())


def test_attach_returns_none_and_warns_once(
    without_extra: None, library: Library, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="screvi_mcp.local.search"):
        assert attach.attach_semantic_index(library) is None
        assert attach.attach_semantic_index(library) is None
    warnings = [r for r in caplog.records if "keyword-only" in r.getMessage()]
    assert len(warnings) == 1
    assert "screvi-mcp[local]" in warnings[0].getMessage()
    # Not a PyPI install: screvi-mcp is not there (yet), and someone else could take the name.
    assert "pip install 'screvi-mcp[" not in warnings[0].getMessage()
    assert "not on PyPI" in warnings[0].getMessage()


def test_search_runs_keyword_only(without_extra: None, library: Library, rows: LibraryRows) -> None:
    attach.attach_semantic_index(library)
    seq = rows.highlight("Barnacles cling to the hull of the old ferry.")
    rows.highlight("Something else entirely.")
    hits, total = search(library, SearchQuery(q="barnacle hull"))
    assert total == 1
    assert hits[0].seq == seq
    assert hits[0].match_type == "keyword"
    assert hits[0].similarity is None
    verified, _ = search(library, SearchQuery(q="barnacle hull", verify=True))
    assert [(h.seq, h.verified_relevance) for h in verified] == [(seq, None)]
