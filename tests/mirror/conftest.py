"""Fixtures for mirror tests: a stand-in Screvi on 127.0.0.1 and an empty mirror file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mirror_testkit import StandIn, serve_stand_in

from testsupport.embeddings import share_one_embedding_model


@pytest.fixture(autouse=True)
def _one_embedding_model(monkeypatch: pytest.MonkeyPatch) -> None:
    share_one_embedding_model(monkeypatch)


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
