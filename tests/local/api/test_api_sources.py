"""/sources: list and filters, one source with its highlights, create, patch, delete."""

from __future__ import annotations

import uuid
from typing import Any

from api_testkit import Api, only_page, ts

from screvi_mcp import contract

SOURCE_FIELDS = {
    "id",
    "name",
    "type",
    "author",
    "image_url",
    "url",
    "origin",
    "note",
    "tags",
    "highlight_count",
    "created_at",
}


def ids(response: Any) -> list[str]:
    return [item["id"] for item in response.json()["data"]]


def add_source(api: Api, name: str, type: str, **columns: Any) -> str:
    """A source of any type (youtube, pdf, ...) written straight into SQLite."""
    source_id = str(uuid.uuid4())
    now = ts("2021-01-01T00:00:00Z")
    values = {"id": source_id, "name": name, "type": type, "created_at": now, "updated_at": now}
    values.update(columns)
    names = ", ".join(values)
    marks = ", ".join("?" * len(values))
    api.sql(f"INSERT INTO sources({names}) VALUES ({marks})", tuple(values.values()))
    return source_id


async def test_create_returns_201_with_every_field(api: Api) -> None:
    response = await api.post(
        "/sources",
        {
            "name": "Thinking, Fast and Slow",
            "type": "book",
            "author": "Daniel Kahneman",
            "url": "https://example.com/book",
            "image_url": "https://example.com/cover.jpg",
            "isbn": "9780374533557",
            "asin": "B00555X8OA",
            "note": "read in 2020",
            "published_date": "2011-10-25",
            "metadata": {"shelf": "psychology"},
        },
    )
    assert response.status_code == 201, response.text
    assert set(response.json()) == {"data"}
    data = response.json()["data"]
    assert set(data) >= SOURCE_FIELDS
    uuid.UUID(data["id"])
    assert data["name"] == "Thinking, Fast and Slow"
    assert data["type"] == "book"
    assert data["author"] == "Daniel Kahneman"
    assert data["url"] == "https://example.com/book"
    assert data["image_url"] == "https://example.com/cover.jpg"
    assert data["note"] == "read in 2020"
    assert data["origin"] is None
    assert data["tags"] == []
    assert data["highlight_count"] == 0
    assert "deleted" not in data


async def test_list_shape_counts_and_order(api: Api) -> None:
    first = await api.source("First")
    second = await api.source("Second", type="podcast")
    for i in range(3):
        await api.highlight(f"h{i}", source_id=first["id"])
    gone = await api.highlight("deleted one", source_id=first["id"])
    await api.delete(f"/highlights/{gone['id']}")
    response = await api.get("/sources")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "pagination"}
    assert body["pagination"] == only_page(2)
    # Newest first.
    assert ids(response) == [second["id"], first["id"]]
    by_id = {item["id"]: item for item in body["data"]}
    assert by_id[first["id"]]["highlight_count"] == 3  # the deleted one does not count
    assert by_id[second["id"]]["highlight_count"] == 0
    for item in body["data"]:
        assert set(item) == SOURCE_FIELDS


async def test_list_pagination_and_per_page_cap(asgi_api: Api) -> None:
    for i in range(5):
        add_source(asgi_api, f"S{i}", "book", created_at=ts(f"2021-01-0{i + 1}"))
    page = await asgi_api.get("/sources", params={"per_page": 2, "page": 2})
    assert page.json()["pagination"] == {
        "page": 2,
        "per_page": 2,
        "total": 5,
        "total_pages": 3,
        "has_more": True,
    }
    assert [s["name"] for s in page.json()["data"]] == ["S2", "S1"]
    capped = await asgi_api.get("/sources", params={"per_page": 1000})
    assert capped.json()["pagination"]["per_page"] == 100
    bad = await asgi_api.get("/sources", params={"per_page": "-3"})
    assert bad.status_code == 400 and "per_page" in bad.json()["fields"]


async def test_type_filter_video_covers_youtube(asgi_api: Api) -> None:
    video = await asgi_api.source("A talk", type="video")
    legacy = add_source(asgi_api, "Old upload", "youtube")
    await asgi_api.source("A book")
    both = await asgi_api.get("/sources", params={"type": "video"})
    assert set(ids(both)) == {video["id"], legacy}
    just_legacy = await asgi_api.get("/sources", params={"type": "youtube"})
    assert ids(just_legacy) == [legacy]
    books = await asgi_api.get("/sources", params={"type": "book"})
    assert [s["name"] for s in books.json()["data"]] == ["A book"]
    bad = await asgi_api.get("/sources", params={"type": "film"})
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_parameter" and "type" in bad.json()["fields"]


async def test_type_filter_accepts_every_listed_value(asgi_api: Api) -> None:
    for kind in [
        "book",
        "article",
        "tweet",
        "podcast",
        "video",
        "self",
        "custom",
        "youtube",
        "author",
        "topics",
    ]:
        response = await asgi_api.get("/sources", params={"type": kind})
        assert response.status_code == 200, kind


async def test_search_by_name_or_author(asgi_api: Api) -> None:
    by_name = await asgi_api.source("The Art of War", author="Sun Tzu")
    by_author = await asgi_api.source("Collected Essays", author="George Orwell")
    await asgi_api.source("Unrelated")
    assert ids(await asgi_api.get("/sources", params={"search": "art of"})) == [by_name["id"]]
    assert ids(await asgi_api.get("/sources", params={"search": "ORWELL"})) == [by_author["id"]]
    # LIKE wildcards in the search text are literal.
    assert ids(await asgi_api.get("/sources", params={"search": "%"})) == []
    assert ids(await asgi_api.get("/sources", params={"search": "_"})) == []


async def test_include_empty_reaches_articles_without_highlights(asgi_api: Api) -> None:
    empty_article = asgi_api.article(title="Unread article")
    asgi_api.sql("UPDATE sources SET note = ? WHERE id = ?", ("article note", empty_article))
    read_article = asgi_api.article(title="Read article")
    await asgi_api.highlight("quote", article_id=read_article)
    await asgi_api.post(f"/articles/{empty_article}/tags", {"tags": ["later"]})
    book = await asgi_api.source("Empty book")
    default = await asgi_api.get("/sources")
    assert set(ids(default)) == {read_article, book["id"]}
    everything = await asgi_api.get("/sources", params={"include_empty": "true"})
    assert set(ids(everything)) == {empty_article, read_article, book["id"]}
    item = next(s for s in everything.json()["data"] if s["id"] == empty_article)
    assert item["type"] == "article"
    assert item["note"] == "article note"
    assert [t["name"] for t in item["tags"]] == ["later"]
    assert item["highlight_count"] == 0


async def test_include_deleted_and_updated_since(asgi_api: Api) -> None:
    kept = await asgi_api.source("Kept")
    gone = await asgi_api.source("Gone")
    assert (await asgi_api.delete(f"/sources/{gone['id']}")).status_code == 200
    assert ids(await asgi_api.get("/sources")) == [kept["id"]]
    everything = await asgi_api.get("/sources", params={"include_deleted": "true"})
    by_id = {item["id"]: item for item in everything.json()["data"]}
    assert by_id[gone["id"]]["deleted"] is True
    assert "deleted" not in by_id[kept["id"]]
    asgi_api.sql("UPDATE sources SET updated_at = ? WHERE id = ?", (ts("2020-01-01"), kept["id"]))
    recent = await asgi_api.get(
        "/sources", params={"updated_since": "2021-01-01T00:00:00Z", "include_deleted": "true"}
    )
    assert ids(recent) == [gone["id"]]


async def test_include_metadata(asgi_api: Api) -> None:
    await asgi_api.source("Meta", metadata={"x": 1})
    assert "metadata" not in (await asgi_api.get("/sources")).json()["data"][0]
    rich = await asgi_api.get("/sources", params={"include_metadata": "true"})
    assert rich.json()["data"][0]["metadata"] == {"x": 1}


# --- GET /sources/{id} --------------------------------------------------------------------


async def test_get_with_highlights_paginated(api: Api) -> None:
    size = contract.DEFAULT_SOURCE_HIGHLIGHTS_PER_PAGE  # larger here than the lists' default
    count = size + 10
    book = await api.source("Long book", metadata={"m": 1})
    await api.post(
        "/highlights/bulk",
        {
            "highlights": [
                {"content": f"loc {i}", "source_id": book["id"], "location": i}
                for i in range(count)
            ]
        },
    )
    response = await api.get(f"/sources/{book['id']}")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "pagination"}
    data = body["data"]
    assert set(data) == SOURCE_FIELDS | {"highlights"}
    assert data["highlight_count"] == count
    # In reading order: by location.
    assert [h["location"] for h in data["highlights"]] == list(range(size))
    assert data["highlights"][0]["source"]["id"] == book["id"]
    assert body["pagination"] == {
        "page": 1,
        "per_page": size,
        "total": count,
        "total_pages": 2,
        "has_more": True,
    }
    second = await api.get(f"/sources/{book['id']}", params={"page": 2})
    assert [h["location"] for h in second.json()["data"]["highlights"]] == list(range(size, count))
    assert second.json()["pagination"]["has_more"] is False
    meta = await api.get(f"/sources/{book['id']}", params={"include_metadata": "true"})
    assert meta.json()["data"]["metadata"] == {"m": 1}
    assert all(h["metadata"] == {} for h in meta.json()["data"]["highlights"])
    assert "metadata" not in data and "metadata" not in data["highlights"][0]


async def test_get_per_page_max_100(asgi_api: Api) -> None:
    book = await asgi_api.source("Big")
    items = [{"content": f"h{i}", "source_id": book["id"]} for i in range(100)]
    await asgi_api.post("/highlights/bulk", {"highlights": items})
    await asgi_api.post("/highlights/bulk", {"highlights": items[:5]})
    response = await asgi_api.get(f"/sources/{book['id']}", params={"per_page": 250})
    assert response.json()["pagination"]["per_page"] == 100
    assert len(response.json()["data"]["highlights"]) == 100
    assert response.json()["pagination"]["total"] == 105


async def test_get_an_article_as_a_source(asgi_api: Api) -> None:
    article_id = asgi_api.article(title="Saved")
    await asgi_api.post(f"/articles/{article_id}/tags", {"tags": ["web"]})
    response = await asgi_api.get(f"/sources/{article_id}")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["type"] == "article" and data["name"] == "Saved"
    assert [t["name"] for t in data["tags"]] == ["web"]


async def test_get_missing_is_404(asgi_api: Api) -> None:
    for bad in ["nope", str(uuid.uuid4())]:
        response = await asgi_api.get(f"/sources/{bad}")
        assert response.status_code == 404 and response.json()["code"] == "not_found"


async def test_get_deleted_is_404(asgi_api: Api) -> None:
    book = await asgi_api.source("Gone")
    await asgi_api.delete(f"/sources/{book['id']}")
    assert (await asgi_api.get(f"/sources/{book['id']}")).status_code == 404


# --- POST bounds --------------------------------------------------------------------------


async def test_create_length_bounds(asgi_api: Api) -> None:
    for field, limit in [
        ("name", 500),
        ("author", 300),
        ("isbn", 20),
        ("asin", 20),
        ("note", 10000),
    ]:
        base = {"name": "Bound", "type": "book"}
        ok = await asgi_api.post("/sources", {**base, field: "x" * limit})
        assert ok.status_code == 201, ok.text
        too_long = await asgi_api.post("/sources", {**base, field: "x" * (limit + 1)})
        assert too_long.status_code == 422, (field, limit)
        assert too_long.json()["code"] == "validation_failed"
        assert set(too_long.json()["fields"]) == {field}


async def test_create_every_creatable_type(asgi_api: Api) -> None:
    for kind in ["book", "podcast", "video", "tweet", "self", "custom"]:
        created = await asgi_api.source(f"A {kind}", type=kind)
        assert created["type"] == kind


async def test_create_rejects(asgi_api: Api) -> None:
    for body, field in [
        ({"type": "book"}, "name"),
        ({"name": "", "type": "book"}, "name"),
        ({"name": "No type"}, "type"),
        ({"name": "x", "type": "article"}, "type"),
        ({"name": "x", "type": "pdf"}, "type"),
        ({"name": "x", "type": "youtube"}, "type"),
        ({"name": "x", "type": "novel"}, "type"),
        ({"name": "x", "type": "book", "url": "nope"}, "url"),
        ({"name": "x", "type": "book", "image_url": "cover.jpg"}, "image_url"),
        ({"name": "x", "type": "book", "published_date": "someday"}, "published_date"),
        ({"name": "x", "type": "book", "metadata": "m"}, "metadata"),
        ({"name": 5, "type": "book"}, "name"),
    ]:
        response = await asgi_api.post("/sources", body)
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "validation_failed"
        assert field in response.json()["fields"]


async def test_second_self_source_is_409_with_its_id(api: Api) -> None:
    first = await api.source("My notes", type="self")
    second = await api.post("/sources", {"name": "More notes", "type": "self"})
    assert second.status_code == 409
    assert second.json()["code"] == "conflict"
    assert second.json()["source_id"] == first["id"]
    # Once the first is deleted a new one may be made.
    await api.delete(f"/sources/{first['id']}")
    assert (await api.post("/sources", {"name": "Fresh", "type": "self"})).status_code == 201


# --- PATCH --------------------------------------------------------------------------------


async def test_patch_partial_update(api: Api) -> None:
    book = await api.source("Draft title", author="Someone", note="keep me")
    response = await api.patch(
        f"/sources/{book['id']}",
        {"name": "Final title", "image_url": "https://example.com/c.png", "author": None},
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["name"] == "Final title"
    assert data["image_url"] == "https://example.com/c.png"
    assert data["author"] is None
    assert data["note"] == "keep me"
    assert data["type"] == "book"
    # Highlights show the new name.
    item = await api.highlight("h", source_id=book["id"])
    assert item["source"]["name"] == "Final title"


async def test_patch_type_is_immutable(asgi_api: Api) -> None:
    book = await asgi_api.source("Book")
    response = await asgi_api.patch(f"/sources/{book['id']}", {"type": "podcast"})
    assert response.status_code == 422
    assert response.json()["code"] == "validation_failed"
    assert "type" in response.json()["fields"]
    fetched = await asgi_api.get(f"/sources/{book['id']}")
    assert fetched.json()["data"]["type"] == "book"


async def test_patch_bounds_and_404(asgi_api: Api) -> None:
    book = await asgi_api.source("Book")
    for body, field in (
        ({"name": "x" * (contract.MAX_SOURCE_NAME + 1)}, "name"),
        ({"name": None}, "name"),
        ({"author": "x" * (contract.MAX_AUTHOR + 1)}, "author"),
        ({"note": "x" * (contract.MAX_NOTE + 1)}, "note"),
        ({"url": "nope"}, "url"),
    ):
        response = await asgi_api.patch(f"/sources/{book['id']}", body)
        assert response.status_code == 422, body
        assert field in response.json()["fields"]
    for bad in ("nope", str(uuid.uuid4())):
        response = await asgi_api.patch(f"/sources/{bad}", {"name": "x"})
        assert response.status_code == 404, bad


# --- DELETE -------------------------------------------------------------------------------


async def test_delete_empty_source(asgi_api: Api) -> None:
    book = await asgi_api.source("Empty")
    response = await asgi_api.delete(f"/sources/{book['id']}")
    assert response.status_code == 200
    assert (await asgi_api.get("/sources")).json()["data"] == []


async def test_delete_with_highlights_needs_cascade(api: Api) -> None:
    book = await api.source("Full")
    made = [await api.highlight(f"h{i}", source_id=book["id"]) for i in range(2)]
    other = await api.highlight("elsewhere")
    refused = await api.delete(f"/sources/{book['id']}")
    assert refused.status_code == 409
    assert refused.json()["code"] == "conflict"
    assert (await api.get(f"/sources/{book['id']}")).status_code == 200
    assert len((await api.get("/highlights")).json()["data"]) == 3
    not_cascade = await api.delete(f"/sources/{book['id']}", params={"cascade": "false"})
    assert not_cascade.status_code == 409
    cascaded = await api.delete(f"/sources/{book['id']}", params={"cascade": "true"})
    assert cascaded.status_code == 200
    assert (await api.get(f"/sources/{book['id']}")).status_code == 404
    assert ids(await api.get("/highlights")) == [other["id"]]
    tombstones = await api.get("/highlights", params={"include_deleted": "true"})
    deleted = {h["id"] for h in tombstones.json()["data"] if h.get("deleted")}
    assert deleted == {h["id"] for h in made}
    # Soft: the rows are still there.
    assert api.scalar("SELECT count(*) FROM highlights") == 3


async def test_delete_only_counts_live_highlights(asgi_api: Api) -> None:
    book = await asgi_api.source("Emptied")
    item = await asgi_api.highlight("h", source_id=book["id"])
    await asgi_api.delete(f"/highlights/{item['id']}")
    assert (await asgi_api.delete(f"/sources/{book['id']}")).status_code == 200


async def test_delete_missing_is_404(asgi_api: Api) -> None:
    for bad in ["nope", str(uuid.uuid4())]:
        response = await asgi_api.delete(f"/sources/{bad}")
        assert response.status_code == 404 and response.json()["code"] == "not_found"


async def test_delete_bad_cascade_value_is_400(asgi_api: Api) -> None:
    book = await asgi_api.source("x")
    response = await asgi_api.delete(f"/sources/{book['id']}", params={"cascade": "maybe"})
    assert response.status_code == 400 and "cascade" in response.json()["fields"]
    assert (await asgi_api.get(f"/sources/{book['id']}")).status_code == 200


async def test_an_article_cannot_be_deleted_as_a_source(asgi_api: Api) -> None:
    article_id = asgi_api.article()
    response = await asgi_api.delete(f"/sources/{article_id}", params={"cascade": "true"})
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert "archive" in response.json()["error"]
    assert (await asgi_api.get(f"/articles/{article_id}")).status_code == 200


async def test_write_answers_carry_metadata_only_when_asked(asgi_api: Api) -> None:
    made = await asgi_api.source(metadata={"shelf": "x"})
    assert "metadata" not in made
    patched = await asgi_api.patch(f"/sources/{made['id']}", {"author": "Someone"})
    assert "metadata" not in patched.json()["data"]
    fetched = await asgi_api.get(f"/sources/{made['id']}", params={"include_metadata": "true"})
    assert fetched.json()["data"]["metadata"] == {"shelf": "x"}
    highlight = await asgi_api.highlight(metadata={"k": 1})
    edited = await asgi_api.patch(f"/highlights/{highlight['id']}", {"note": "n"})
    assert "metadata" not in edited.json()["data"]
