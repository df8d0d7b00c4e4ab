"""The benchmark reuses a cached mixed-language library only if the model this install
loads embedded it: a copy made while another English model was the default would be
searched with vectors of the wrong width (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")

from bench import libraries, mixed_language

from screvi_mcp.local.search.embedder import load_embedder
from screvi_mcp.local.search.embedding_rows import MODEL_SETTING
from screvi_mcp.local.search.index import index_model_id
from screvi_mcp.local.storage.library import Library


def _library(path: Path, model: str) -> Path:
    library = Library.open(path)
    try:
        library.set_setting(MODEL_SETTING, model)
    finally:
        library.close()
    return path


def _cached_mixed(directory: Path, model: str) -> libraries.BuiltLibrary:
    """An English library and a cached mixed copy of it recorded as embedded by `model`."""
    english = _library(directory / "english.sqlite3", index_model_id(load_embedder()))
    built = libraries.BuiltLibrary(english, 10, [], "", None)
    mixed = directory / f"library-mixed-10-v{mixed_language.VERSION}.sqlite3"
    _library(mixed, model)
    mixed.with_suffix(".json").write_text(json.dumps({"size": 10, "seconds": 1.0}))
    return built


def test_a_mixed_library_of_another_english_model_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rebuilt: list[Path] = []
    monkeypatch.setattr(mixed_language, "_add_foreign", lambda path, count: rebuilt.append(path))
    built = _cached_mixed(tmp_path, "another-model/content+note.v1")
    path = mixed_language.mixed_library_for(built, use_cache=True, directory=tmp_path)
    assert rebuilt == [path]
    assert libraries.recorded_model(path) == index_model_id(load_embedder())


def test_a_mixed_library_of_this_model_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rebuilt: list[Path] = []
    monkeypatch.setattr(mixed_language, "_add_foreign", lambda path, count: rebuilt.append(path))
    built = _cached_mixed(tmp_path, index_model_id(load_embedder()))
    mixed_language.mixed_library_for(built, use_cache=True, directory=tmp_path)
    assert rebuilt == []
