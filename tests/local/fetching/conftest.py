"""Fixtures of the fetching tests: a loopback web server and a fresh library."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fetching_site import LocalSite, serve

from screvi_mcp.local.storage.library import Library


@pytest.fixture
def site() -> Iterator[LocalSite]:
    yield from serve("127.0.0.1")


@pytest.fixture
def second_site() -> Iterator[LocalSite]:
    """Another server on 127.0.0.2 (still loopback): the host a refusal test lets in."""
    yield from serve("127.0.0.2")


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    lib = Library.open(tmp_path / "library.sqlite")
    try:
        yield lib
    finally:
        lib.close()
