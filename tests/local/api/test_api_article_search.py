"""GET /ext/articles/search: the library's extension for passages inside saved articles."""

from __future__ import annotations

import time

import pytest
from api_testkit import Api, ts

from screvi_mcp import contract
from screvi_mcp.extensions import ARTICLE_SEARCH_PATH, PassagePage
from screvi_mcp.local.passages import attach

PATH = "/" + ARTICLE_SEARCH_PATH
BODY = "\n\n".join(
    [
        "Context switching costs programmers far more than the minute an interruption "
        "takes: rebuilding the mental model of the code takes twenty minutes or more. " * 3,
        "Open-plan offices were sold as places of serendipity but mostly produce noise, and "
        "people answer it with headphones and a wish to work from home. " * 3,
    ]
)


async def test_finds_passages_with_offsets_filters_and_meaning(api: Api) -> None:
    old = api.article(title="Deep work", content_text=BODY, saved_at=ts("2024-01-01T00:00:00Z"))
    new = api.article(title="Bread", content_text="Knead the dough and let it rise. " * 20)
    api.sql("UPDATE articles SET favorite = 1 WHERE source_id = ?", (new,))

    response = await api.get(PATH, params={"q": "headphones noise"})
    assert response.status_code == 200, response.text
    page = PassagePage.model_validate(response.json())
    assert [hit.article.id for hit in page.data] == [old]
    passage = page.data[0].passage
    assert BODY[passage.offset : passage.offset + passage.length] == passage.text
    assert passage.text.startswith("Open-plan offices") and passage.ordinal == 1
    assert page.data[0].match_type.value in ("keyword", "both")
    assert page.pagination.total == 1

    for params in (
        {"favorite": "true"},
        {"saved_since": "2025-01-01T00:00:00Z"},
        {"status": "read"},
        {"tag": "nothing-tagged"},
    ):
        filtered = await api.get(PATH, params={"q": "headphones noise", **params})
        assert filtered.json()["data"] == [], params

    if attach.index_for(api.library) is None:
        pytest.skip("keyword-only install: no search by meaning")
    started = time.monotonic()
    assert attach.wait_until_embedded(api.library, 60)
    # The delay until findable by meaning (docs/articles.md quotes it): bounded, not timed.
    assert time.monotonic() - started < 60
    meaning = await api.get(PATH, params={"q": "why interruptions hurt software developers"})
    found = PassagePage.model_validate(meaning.json())
    assert found.semantic and found.passages_waiting == 0
    assert found.data[0].article.id == old and found.data[0].passage.ordinal == 0
    assert found.data[0].similarity is not None and found.data[0].similarity > 0.3


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "x" * (contract.MAX_QUERY_CHARS + 1)}, "q"),
        ({"q": "tea", "page": "0"}, "page"),
        ({"q": "tea", "min_relevance": "2"}, "min_relevance"),
        ({"q": "tea", "status": "maybe"}, "status"),
    ],
)
async def test_bad_parameters_are_named(asgi_api: Api, params: dict[str, str], field: str) -> None:
    response = await asgi_api.get(PATH, params=params)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_parameter" and field in body["fields"]


async def test_needs_a_key(asgi_api: Api) -> None:
    response = await asgi_api.get(PATH, params={"q": "tea"}, key=None)
    assert response.status_code == 401 and response.json()["code"] == "missing_api_key"
