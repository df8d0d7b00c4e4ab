"""/search: parameters and their bounds, filters, result shape; deleted never returned.

Ranking quality is the search package's concern (tests/local/search); here it is the HTTP
contract: what goes in, what comes out.
"""

from __future__ import annotations

from typing import Any

from api_testkit import HIGHLIGHT_FIELDS, Api

from screvi_mcp import contract

RESULT_EXTRA = {"similarity", "match_type", "relevance", "verified_relevance"}


def ids(response: Any) -> set[str]:
    return {item["id"] for item in response.json()["data"]}


async def test_result_shape(api: Api) -> None:
    item = await api.highlight("The quokka smiles at the photographer")
    response = await api.get("/search", params={"q": "quokka"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"data", "pagination"}
    assert set(body["pagination"]) == {"page", "per_page", "total", "total_pages", "has_more"}
    assert body["pagination"]["per_page"] == contract.DEFAULT_PER_PAGE
    assert body["pagination"]["page"] == 1
    hit = next(h for h in body["data"] if h["id"] == item["id"])
    assert set(hit) == HIGHLIGHT_FIELDS | RESULT_EXTRA
    assert hit["content"] == item["content"]
    assert hit["match_type"] in {"keyword", "both"}  # the word itself is in it
    assert hit["similarity"] is None or 0 <= hit["similarity"] <= 1
    assert isinstance(hit["relevance"], int | float)
    assert hit["verified_relevance"] is None  # not asked to verify
    for other in body["data"]:
        assert other["match_type"] in {"semantic", "keyword", "both"}
        if other["match_type"] == "keyword":
            assert other["similarity"] is None


async def test_q_is_required(api: Api) -> None:
    for params in ({}, {"q": ""}, {"q": "   "}):
        response = await api.get("/search", params=params)
        assert response.status_code == 400, params
        assert response.json()["code"] == "invalid_parameter"
        assert "q" in response.json()["fields"]


async def test_q_length_bound(asgi_api: Api) -> None:
    words = "word " * (contract.MAX_QUERY_CHARS // 5 - 1) + "last"  # one character short
    assert len(words) == contract.MAX_QUERY_CHARS - 1
    at_limit = await asgi_api.get("/search", params={"q": words})
    assert at_limit.status_code == 200, at_limit.text
    exactly = await asgi_api.get("/search", params={"q": "a" * contract.MAX_QUERY_CHARS})
    assert exactly.status_code == 200
    too_long = await asgi_api.get("/search", params={"q": "a" * (contract.MAX_QUERY_CHARS + 1)})
    assert too_long.status_code == 400
    assert too_long.json()["code"] == "invalid_parameter"
    assert set(too_long.json()["fields"]) == {"q"}


async def test_per_page_is_clamped_to_the_search_maximum(asgi_api: Api) -> None:
    most = contract.MAX_SEARCH_PER_PAGE
    await asgi_api.post(
        "/highlights/bulk",
        {"highlights": [{"content": f"zebra stripe number {i}"} for i in range(most + 10)]},
    )
    response = await asgi_api.get("/search", params={"q": "zebra", "per_page": most + 30})
    assert response.status_code == 200
    assert response.json()["pagination"]["per_page"] == most
    assert len(response.json()["data"]) == most
    assert response.json()["pagination"]["has_more"] is True
    second = await asgi_api.get("/search", params={"q": "zebra", "per_page": most, "page": 2})
    assert len(second.json()["data"]) >= 10
    assert not ids(second) & ids(response)


async def test_bad_parameters_are_400(asgi_api: Api) -> None:
    for params, name in [
        ({"min_relevance": "1.5"}, "min_relevance"),
        ({"min_relevance": "-0.1"}, "min_relevance"),
        ({"min_relevance": "high"}, "min_relevance"),
        ({"per_page": "0"}, "per_page"),
        ({"page": "0"}, "page"),
        ({"favorite": "sometimes"}, "favorite"),
        ({"verify": "please"}, "verify"),
        ({"types": "book,novel"}, "types"),
    ]:
        response = await asgi_api.get("/search", params={"q": "anything", **params})
        assert response.status_code == 400, (params, name)
        assert response.json()["code"] == "invalid_parameter"
        assert name in response.json()["fields"]


async def test_min_relevance_bounds_are_inclusive(asgi_api: Api) -> None:
    for value in ("0", "1", "0.72"):
        response = await asgi_api.get("/search", params={"q": "x", "min_relevance": value})
        assert response.status_code == 200, value


async def test_filters(asgi_api: Api) -> None:
    book = await asgi_api.source("Walden", author="Henry Thoreau")
    podcast = await asgi_api.source("Woods Talk", type="podcast", author="Someone")
    in_book = await asgi_api.highlight(
        "I went to the woods to live deliberately", source_id=book["id"]
    )
    in_podcast = await asgi_api.highlight(
        "The woods are lovely dark and deep",
        source_id=podcast["id"],
        favorite=True,
        tags=["Poetry"],
    )
    loose = await asgi_api.highlight("Into the woods we go")

    async def found(**params: Any) -> set[str]:
        response = await asgi_api.get("/search", params={"q": "woods", **params})
        assert response.status_code == 200, response.text
        return ids(response)

    assert {in_book["id"], in_podcast["id"], loose["id"]} <= await found()
    assert await found(source="walden") == {in_book["id"]}
    assert await found(source="thoreau") == {in_book["id"]}  # author
    assert await found(tag="poetry") == {in_podcast["id"]}
    assert await found(types="podcast") == {in_podcast["id"]}
    assert await found(types="book,podcast") == {in_book["id"], in_podcast["id"]}
    assert await found(favorite="true") == {in_podcast["id"]}
    assert loose["id"] not in await found(favorite="true")


async def test_deleted_highlights_are_never_returned(asgi_api: Api) -> None:
    kept = await asgi_api.highlight("The axolotl regrows its limbs")
    gone = await asgi_api.highlight("An axolotl in a garden pond")
    await asgi_api.delete(f"/highlights/{gone['id']}")
    found = ids(await asgi_api.get("/search", params={"q": "axolotl"}))
    assert kept["id"] in found
    assert gone["id"] not in found
    # Nor those of a deleted source.
    book = await asgi_api.source("Axolotl facts")
    in_book = await asgi_api.highlight("axolotl trivia", source_id=book["id"])
    await asgi_api.delete(f"/sources/{book['id']}", params={"cascade": "true"})
    assert in_book["id"] not in ids(await asgi_api.get("/search", params={"q": "axolotl"}))


async def test_searches_notes_and_source_names(asgi_api: Api) -> None:
    book = await asgi_api.source("Pelicans of the World", author="Ornithologist Jones")
    by_note = await asgi_api.highlight("something else entirely", note="flamingo remark")
    by_source = await asgi_api.highlight("a quiet line", source_id=book["id"])
    assert by_note["id"] in ids(await asgi_api.get("/search", params={"q": "flamingo"}))
    assert by_source["id"] in ids(await asgi_api.get("/search", params={"q": "pelicans"}))
    assert by_source["id"] in ids(await asgi_api.get("/search", params={"q": "ornithologist"}))


async def test_no_match_is_an_empty_page(asgi_api: Api) -> None:
    await asgi_api.highlight("nothing to see")
    response = await asgi_api.get("/search", params={"q": "xylophonist", "min_relevance": "1"})
    assert response.status_code == 200
    assert response.json()["data"] == []
    assert response.json()["pagination"]["total"] == 0
    assert response.json()["pagination"]["has_more"] is False


async def test_verify_fills_verified_relevance(asgi_api: Api) -> None:
    item = await asgi_api.highlight("Bees dance to tell the hive where flowers are")
    response = await asgi_api.get("/search", params={"q": "bees dance", "verify": "true"})
    assert response.status_code == 200, response.text
    hit = next(h for h in response.json()["data"] if h["id"] == item["id"])
    # Keyword matches are always kept; a verified semantic match carries a probability.
    if hit["match_type"] != "keyword":
        assert hit["verified_relevance"] is not None
    for other in response.json()["data"]:
        value = other["verified_relevance"]
        assert value is None or 0 <= value <= 1
