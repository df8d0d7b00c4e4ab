"""Fixtures for search tests: a real library file, filled with plain SQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from search_rows import LibraryRows

from screvi_mcp.local.library import Library


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    opened = Library.open(tmp_path / "library.sqlite")
    yield opened
    opened.close()


@pytest.fixture
def rows(library: Library) -> LibraryRows:
    return LibraryRows(library)
