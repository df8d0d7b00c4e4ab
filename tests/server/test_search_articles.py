"""search_articles: embedded library (save → search → read), hosted fallback, errors."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import pytest
from article_texts import ARTICLES
from server_testkit import (
    LocalApi,
    Seed,
    assert_tool_error,
    call_error,
    call_ok,
    insert_article,
    mcp_client,
)

from screvi_mcp.server.backend import BackendConfig
from testsupport.pages_site import article_html, serve_pages
from testsupport.polling import wait_until

_READ = re.compile(r'read_article\(article_id="([^"]+)", offset=(\d+), max_chars=(\d+)\)')


def passages_waiting(path: Path) -> int:
    with sqlite3.connect(path, timeout=10) as conn:
        return int(conn.execute("SELECT count(*) FROM passage_embedding_queue").fetchone()[0])


def wait_for_passage_vectors(path: Path, timeout: float = 60.0) -> float:
    """Seconds until no passage waits for a vector (polled, bounded)."""
    started = time.monotonic()
    wait_until(
        lambda: not passages_waiting(path),
        timeout=timeout,
        what=lambda: f"{passages_waiting(path)} passages still not embedded",
        every=0.02,
    )
    return time.monotonic() - started


@pytest.fixture
def pages() -> dict[str, bytes]:
    return {path: article_html(*parts) for path, parts in ARTICLES.items()}


async def test_save_search_read_round_trip(
    tmp_path: Path, pages: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCREVI_ALLOW_PRIVATE_NETWORKS", "1")
    path = tmp_path / "lib.sqlite3"
    with serve_pages(pages) as site:
        async with mcp_client(path) as client:
            for url in ("/focus", "/crdts", "/bread"):
                args = {"url": site + url, "wait": True, "wait_seconds": 60}
                tags = {"tags": ["baking"]} if url == "/bread" else {}
                saved = await call_ok(client, "save_article", {**args, **tags})
                assert "parse_state parsed" in saved, saved

            # Keywords: at once, before any vector exists.
            exact = await call_ok(client, "search_articles", {"query": "grow-only counter"})
            assert exact.startswith("How collaborative editors merge edits"), exact

            wait_for_passage_vectors(path)
            found = await call_ok(
                client,
                "search_articles",
                {"query": "time lost getting back to work after being interrupted"},
            )
            assert found.startswith("The hidden cost of interruptions (Ada Focus · 127.0.0.1)"), (
                found
            )
            article_id, offset, max_chars = _READ.search(found).groups()  # type: ignore[union-attr]
            chunk = await call_ok(
                client,
                "read_article",
                {"article_id": article_id, "offset": int(offset), "max_chars": int(max_chars)},
            )
            assert f"Characters {offset}–" in chunk
            snippet = re.search(r'^   "(.+)"$', found, re.MULTILINE).group(1)  # type: ignore[union-attr]
            assert snippet.strip("…") in " ".join(chunk.split())

            negative = await call_ok(
                client, "search_articles", {"query": "lattice quantum chromodynamics"}
            )
            assert negative.startswith("No saved article matches."), negative

            tagged = await call_ok(
                client, "search_articles", {"query": "fermentation", "tag": "baking"}
            )
            assert tagged.startswith("Sourdough at home"), tagged
            untagged = await call_ok(
                client, "search_articles", {"query": "grow-only counter", "tag": "baking"}
            )
            assert untagged.startswith("No saved article matches."), untagged
            favourites = await call_ok(
                client, "search_articles", {"query": "fermentation", "favorite": True}
            )
            assert favourites.startswith("No saved article matches.")

            detailed = await call_ok(
                client,
                "search_articles",
                {"query": "sourdough starter", "response_format": "detailed"},
            )
            assert "living culture of wild yeast" in detailed and "tags: baking" in detailed


async def test_blank_query_is_refused_with_advice(library_path: Path) -> None:
    async with mcp_client(library_path) as client:
        text = await call_error(client, "search_articles", {"query": "   "})
    assert_tool_error(text, "invalid_parameter", "query")


async def test_hosted_falls_back_to_title_search_and_says_so(
    local_api: LocalApi, seed: Seed
) -> None:
    """A second embedded library over HTTP, configured as hosted: the tool must not call the
    extension (the stand-in has it, and would find body words), only GET /articles?q=."""
    config = BackendConfig(api_key=local_api.read_key, base_url=local_api.base_url)
    async with mcp_client(config) as client:
        by_title = await call_ok(client, "search_articles", {"query": "attention"})
        by_body = await call_ok(client, "search_articles", {"query": "currency"})
        by_word = await call_ok(client, "search_articles", {"query": "notes on attention"})
    assert by_title.startswith("On attention") and seed.article_id in by_title
    assert "hosted Screvi cannot search inside article text" in by_title
    assert "screvi-mcp sync" in by_title
    assert by_body.startswith("No saved articles found."), by_body
    assert by_word.startswith("On attention") and 'matching "attention"' in by_word
    assert "hosted Screvi cannot search inside article text" in by_body


async def test_keyword_only_says_so_and_never_advises_min_relevance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime", reason="the model loader needs the `local` extra")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"this is not an onnx model")
    monkeypatch.setenv("SCREVI_EMBEDDING_MODEL_DIR", str(folder))
    path = tmp_path / "lib.sqlite3"
    async with mcp_client(path) as client:  # creates and migrates the library
        pass
    insert_article(
        path,
        url="http://127.0.0.1:9/b",
        title="Bread",
        parse_state="parsed",
        text="A sourdough starter is a living culture of wild yeast.",
    )
    async with mcp_client(path) as client:
        found = await call_ok(client, "search_articles", {"query": "sourdough yeast"})
        none = await call_ok(client, "search_articles", {"query": "leavening microbes"})
    assert found.startswith("Bread") and "Only exact words matched here" in found
    assert none.startswith("No saved article matches.") and "Only exact words" in none
    assert "min_relevance" not in none
