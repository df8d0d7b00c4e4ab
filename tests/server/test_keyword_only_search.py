"""When search matches keywords only, search_highlights says why and never advises a lower
min_relevance (which cannot help)."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest
from server_testkit import call_ok, mcp_client

pytest.importorskip("onnxruntime", reason="the model loader needs the `local` extra")


async def test_keyword_only_search_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"this is not an onnx model")  # passes start-up checks
    tokenizer = resources.files("screvi_mcp.local.search.minilm") / "tokenizer.json"
    with resources.as_file(tokenizer) as path:
        shutil.copy(path, folder / "tokenizer.json")
    monkeypatch.setenv("SCREVI_EMBEDDING_MODEL_DIR", str(folder))
    async with mcp_client(tmp_path / "library.sqlite3") as client:
        await call_ok(client, "create_highlight", {"content": "The quick brown fox jumps."})
        none = await call_ok(client, "search_highlights", {"query": "a speedy canine"})
        some = await call_ok(client, "search_highlights", {"query": "fox"})
    assert "keywords only" in none and "could not be loaded" in none
    assert "min_relevance" not in none
    assert "quick brown fox" in some and "keywords only" in some


async def test_semantic_search_gives_no_such_note(tmp_path: Path) -> None:
    async with mcp_client(tmp_path / "library.sqlite3") as client:
        await call_ok(client, "create_highlight", {"content": "The quick brown fox jumps."})
        text = await call_ok(client, "search_highlights", {"query": "fox"})
    assert "keywords only" not in text
