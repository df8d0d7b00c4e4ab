"""A model that cannot be loaded leaves search keyword-only, and /search says why."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import httpx
import pytest

from screvi_mcp.local.api import keys
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.storage.library import Library
from screvi_mcp.models import KEYWORD_ONLY_HEADER

pytest.importorskip("onnxruntime", reason="the model loader needs the `local` extra")


@pytest.fixture
def broken_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Files where the loader wants them (so start-up checks pass), but no model inside."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"this is not an onnx model")
    tokenizer = resources.files("screvi_mcp.local.search.minilm") / "tokenizer.json"
    with resources.as_file(tokenizer) as path:
        shutil.copy(path, folder / "tokenizer.json")
    monkeypatch.setenv("SCREVI_EMBEDDING_MODEL_DIR", str(folder))
    return folder


async def test_search_reports_why_it_is_keyword_only(tmp_path: Path, broken_model: Path) -> None:
    path = tmp_path / "library.sqlite3"
    library = Library.open(path)
    _, secret = keys.create_key(library, "tests", write=True)
    library.close()
    app = create_app(path)
    async with (
        app.router.lifespan_context(app),  # starts: a broken model is no crash
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://testserver/api/v1",
            headers={"X-API-Key": secret},
        ) as client,
    ):
        made = await client.post("/highlights", json={"content": "The quick brown fox jumps."})
        assert made.status_code == 201
        found = await client.get("/search", params={"q": "fox"})
        assert found.status_code == 200
        assert [hit["content"] for hit in found.json()["data"]] == ["The quick brown fox jumps."]
        reason = found.headers[KEYWORD_ONLY_HEADER]
        assert "could not be loaded" in reason and str(broken_model) in reason
