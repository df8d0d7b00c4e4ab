"""Fixtures of the review tests (helpers live in `review_testkit`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testsupport.embeddings import ENGLISH_MODEL, share_one_embedding_model


@pytest.fixture(autouse=True)
def _one_embedding_model(monkeypatch: pytest.MonkeyPatch) -> None:
    share_one_embedding_model(monkeypatch)


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default library's folder (where hosted mode keeps its review state) in tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for name in [key for key in os.environ if key.startswith("SCREVI_") and key != ENGLISH_MODEL]:
        monkeypatch.delenv(name)
    return tmp_path / "data"
