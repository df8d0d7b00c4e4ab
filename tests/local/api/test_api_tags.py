"""/tags: list with counts, create (or find in any case), rename, hard delete."""

from __future__ import annotations

import uuid
from typing import Any

from api_testkit import Api

from screvi_mcp import contract

TAG_FIELDS = {"id", "name", "color", "highlight_count", "article_count", "created_at", "updated_at"}


async def tag(api: Api, name: str, **fields: Any) -> dict[str, Any]:
    response = await api.post("/tags", {"name": name, **fields})
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def test_list_with_counts(api: Api) -> None:
    await api.highlight("one", tags=["Reading"])
    await api.highlight("two", tags=["reading", "other"])
    gone = await api.highlight("three", tags=["Reading"])
    await api.delete(f"/highlights/{gone['id']}")
    article_id = api.article()
    await api.post(f"/articles/{article_id}/tags", {"tags": ["READING"]})
    await tag(api, "unused", color="#00ff00")
    response = await api.get("/tags")
    assert response.status_code == 200
    assert set(response.json()) == {"data"}
    by_name = {t["name"]: t for t in response.json()["data"]}
    assert set(by_name) == {"Reading", "other", "unused"}
    for item in by_name.values():
        assert set(item) == TAG_FIELDS
    assert by_name["Reading"]["highlight_count"] == 2  # the deleted one does not count
    assert by_name["Reading"]["article_count"] == 1
    assert by_name["other"]["highlight_count"] == 1
    assert by_name["other"]["article_count"] == 0
    assert by_name["unused"]["highlight_count"] == 0
    assert by_name["unused"]["color"] == "#00ff00"


async def test_create_or_find_any_case(api: Api) -> None:
    created = await api.post("/tags", {"name": "Philosophy", "color": "#aabbcc"})
    assert created.status_code == 201
    data = created.json()["data"]
    assert data["name"] == "Philosophy" and data["color"] == "#aabbcc"
    uuid.UUID(data["id"])
    again = await api.post("/tags", {"name": "PHILOSOPHY"})
    assert again.status_code == 200
    assert again.json()["data"]["id"] == data["id"]
    assert again.json()["data"]["name"] == "Philosophy"
    assert len((await api.get("/tags")).json()["data"]) == 1


async def test_create_rejects(asgi_api: Api) -> None:
    for body, field in [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * (contract.MAX_TAG_NAME + 1)}, "name"),
        ({"name": 7}, "name"),
        ({"name": "ok", "color": "red"}, "color"),
        ({"name": "ok", "color": "#12345"}, "color"),
    ]:
        response = await asgi_api.post("/tags", body)
        assert response.status_code == 422, (body, field)
        assert response.json()["code"] == "validation_failed"
        assert field in response.json()["fields"]


async def test_name_length_bound_is_100(asgi_api: Api) -> None:
    assert (await asgi_api.post("/tags", {"name": "x" * contract.MAX_TAG_NAME})).status_code == 201
    # The same bound wherever a tag name is accepted.
    long_name = "y" * (contract.MAX_TAG_NAME + 1)
    for path, body in (
        ("/highlights", {"content": "c", "tags": [long_name]}),
        ("/tags", {"name": long_name}),
    ):
        assert (await asgi_api.post(path, body)).status_code == 422


async def test_rename_keeps_carriers(api: Api) -> None:
    item = await api.highlight("tagged", tags=["draft"])
    tag_id = item["tags"][0]["id"]
    response = await api.patch(f"/tags/{tag_id}", {"name": "Final", "color": "#123456"})
    assert response.status_code == 200
    assert response.json()["data"]["name"] == "Final"
    assert response.json()["data"]["color"] == "#123456"
    assert response.json()["data"]["highlight_count"] == 1
    fetched = await api.get(f"/highlights/{item['id']}")
    assert fetched.json()["data"]["tags"] == [{"id": tag_id, "name": "Final", "color": "#123456"}]
    # Only a case change of its own name is not a clash.
    recased = await api.patch(f"/tags/{tag_id}", {"name": "FINAL"})
    assert recased.status_code == 200 and recased.json()["data"]["name"] == "FINAL"


async def test_rename_clash_is_422(asgi_api: Api) -> None:
    first = await tag(asgi_api, "first")
    await tag(asgi_api, "Second")
    response = await asgi_api.patch(f"/tags/{first['id']}", {"name": "second"})
    assert response.status_code == 422
    assert response.json()["code"] == "validation_failed"
    assert "name" in response.json()["fields"]
    names = sorted(t["name"] for t in (await asgi_api.get("/tags")).json()["data"])
    assert names == ["Second", "first"]


async def test_patch_bounds_and_404(asgi_api: Api) -> None:
    made = await tag(asgi_api, "t")
    for body, field in (
        ({"name": "x" * (contract.MAX_TAG_NAME + 1)}, "name"),
        ({"name": None}, "name"),
        ({"color": "blue"}, "color"),
    ):
        response = await asgi_api.patch(f"/tags/{made['id']}", body)
        assert response.status_code == 422 and field in response.json()["fields"]
    for bad in ("nope", str(uuid.uuid4())):
        response = await asgi_api.patch(f"/tags/{bad}", {"name": "x"})
        assert response.status_code == 404 and response.json()["code"] == "not_found"


async def test_delete_is_hard_and_detaches(api: Api) -> None:
    first = await api.highlight("one", tags=["doomed", "kept"])
    await api.highlight("two", tags=["doomed"])
    article_id = api.article()
    await api.post(f"/articles/{article_id}/tags", {"tags": ["doomed"]})
    doomed = next(t["id"] for t in first["tags"] if t["name"] == "doomed")
    response = await api.delete(f"/tags/{doomed}")
    assert response.status_code == 200
    # The count of rows that carried the tag is reported (its field name is ours to choose).
    assert 3 in response.json()["data"].values()
    assert [t["name"] for t in (await api.get("/tags")).json()["data"]] == ["kept"]
    highlights = (await api.get("/highlights")).json()["data"]
    assert len(highlights) == 2  # the highlights remain
    assert [
        t["name"] for t in (await api.get(f"/highlights/{first['id']}")).json()["data"]["tags"]
    ] == ["kept"]
    article = (await api.get(f"/articles/{article_id}")).json()["data"]
    assert article["tags"] == []
    assert api.scalar("SELECT count(*) FROM tags WHERE id = ?", (doomed,)) == 0
    again = await api.delete(f"/tags/{doomed}")
    assert again.status_code == 404
    # The name is free again.
    assert (await api.post("/tags", {"name": "doomed"})).status_code == 201


async def test_delete_missing_is_404(asgi_api: Api) -> None:
    for bad in ["nope", str(uuid.uuid4())]:
        response = await asgi_api.delete(f"/tags/{bad}")
        assert response.status_code == 404 and response.json()["code"] == "not_found"
