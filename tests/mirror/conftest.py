"""Fixtures for mirror tests: a stand-in Screvi on 127.0.0.1 and an empty mirror file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mirror_testkit import StandIn, serve_stand_in

_EMBEDDERS: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def _one_embedding_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Load the embedding model once for all these tests (it holds no library state)."""
    try:
        from screvi_mcp.local.search import embedder
    except ImportError:
        return
    original = embedder.load_embedder

    def load_once() -> Any:
        key = os.environ.get(embedder.MODEL_DIR_ENV, "")
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = original()
        return _EMBEDDERS[key]

    monkeypatch.setattr(embedder, "load_embedder", load_once)


@pytest.fixture
def stand_in_path(tmp_path: Path) -> Path:
    return tmp_path / "screvi.sqlite3"


@pytest.fixture
def stand_in(stand_in_path: Path) -> Iterator[StandIn]:
    with serve_stand_in(stand_in_path) as server:
        yield server


@pytest.fixture
def mirror_path(tmp_path: Path) -> Path:
    return tmp_path / "mirror" / "mirror.sqlite3"
