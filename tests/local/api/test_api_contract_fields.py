"""What the embedded library renders has exactly the wire models' fields, no more, no fewer.

The client ignores unknown fields, so a field the store renders under another name, or
forgets, would otherwise drift silently from `models.py`.
"""

from __future__ import annotations

from typing import Any

from api_testkit import Api
from pydantic import BaseModel

from screvi_mcp.models import (
    Article,
    ArticleWithContent,
    Highlight,
    HighlightSource,
    SearchResult,
    Source,
    SourceWithHighlights,
    Tag,
    TagWithCounts,
)

# Fields the spec shows only when asked for (`metadata`) or on tombstones (`deleted`).
OPTIONAL = {"metadata", "deleted"}


def fields(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


def data(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]


async def test_highlights_render_the_highlight_model(asgi_api: Api) -> None:
    source = await asgi_api.source("A Book")
    made = await asgi_api.highlight("words", source_id=source["id"], tags=["t"])
    plain = data(await asgi_api.get(f"/highlights/{made['id']}"))
    assert set(plain) == fields(Highlight) - OPTIONAL
    assert set(plain["source"]) == fields(HighlightSource)
    assert [set(tag) for tag in plain["tags"]] == [fields(Tag)]
    full = data(await asgi_api.get(f"/highlights/{made['id']}", params={"include_metadata": 1}))
    assert set(full) == fields(Highlight) - {"deleted"}
    assert (await asgi_api.delete(f"/highlights/{made['id']}")).status_code == 200
    listed = data(
        await asgi_api.get(
            "/highlights", params={"include_deleted": "true", "include_metadata": "true"}
        )
    )
    assert [set(item) for item in listed] == [fields(Highlight)]


async def test_search_results_render_the_search_result_model(asgi_api: Api) -> None:
    await asgi_api.highlight("a sentence about gardens")
    found = data(await asgi_api.get("/search", params={"q": "gardens"}))
    assert [set(item) for item in found] == [fields(SearchResult) - OPTIONAL]


async def test_sources_render_the_source_model(asgi_api: Api) -> None:
    source = await asgi_api.source("A Book")
    await asgi_api.highlight("words", source_id=source["id"])
    listed = data(await asgi_api.get("/sources"))
    assert [set(item) for item in listed] == [fields(Source) - OPTIONAL]
    one = data(await asgi_api.get(f"/sources/{source['id']}"))
    assert set(one) == fields(SourceWithHighlights) - OPTIONAL
    assert [set(item) for item in one["highlights"]] == [fields(Highlight) - OPTIONAL]


async def test_articles_render_the_article_models(asgi_api: Api) -> None:
    article_id = asgi_api.article()
    listed = data(await asgi_api.get("/articles"))
    assert [set(item) for item in listed] == [fields(Article)]
    one = data(await asgi_api.get(f"/articles/{article_id}"))
    assert set(one) == fields(ArticleWithContent)


async def test_tags_render_the_tag_model(asgi_api: Api) -> None:
    await asgi_api.highlight("words", tags=["t"])
    listed = data(await asgi_api.get("/tags"))
    assert [set(item) for item in listed] == [fields(TagWithCounts)]
