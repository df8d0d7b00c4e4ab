"""Fixtures of the review tests (helpers live in `review_testkit`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

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


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default library's folder (where hosted mode keeps its review state) in tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for name in [key for key in os.environ if key.startswith("SCREVI_")]:
        monkeypatch.delenv(name)
    return tmp_path / "data"
