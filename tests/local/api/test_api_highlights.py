"""/highlights: list, filters, random, get, create (single and bulk), patch, delete, tags."""

from __future__ import annotations

import uuid
from typing import Any

from api_testkit import HIGHLIGHT_FIELDS, Api, ts

from screvi_mcp import contract

SOURCE_FIELDS = {"id", "name", "type", "author", "image_url", "url"}
PAGINATION_FIELDS = {"page", "per_page", "total", "total_pages", "has_more"}


def ids(response: Any) -> list[str]:
    return [item["id"] for item in response.json()["data"]]


# --- success shapes -----------------------------------------------------------------------


async def test_create_returns_201_with_source_and_tags(api: Api) -> None:
    book = await api.source("Meditations", author="Marcus Aurelius", url="https://example.com/m")
    response = await api.post(
        "/highlights",
        {
            "content": "You have power over your mind",
            "note": "stoic",
            "favorite": True,
            "url": "https://example.com/m#1",
            "location": 42,
            "date": "2024-05-01T12:00:00Z",
            "source_id": book["id"],
            "tags": ["Philosophy", "stoicism"],
        },
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"data"}
    item = body["data"]
    assert set(item) == HIGHLIGHT_FIELDS  # no metadata unless asked, no deleted flag
    uuid.UUID(item["id"])
    assert item["content"] == "You have power over your mind"
    assert item["note"] == "stoic"
    assert item["favorite"] is True
    assert item["url"] == "https://example.com/m#1"
    assert item["location"] == 42
    assert item["date"].startswith("2024-05-01T12:00:00")
    assert item["created_at"].endswith("Z") and item["updated_at"].endswith("Z")
    assert set(item["source"]) == SOURCE_FIELDS
    assert item["source"] == {
        "id": book["id"],
        "name": "Meditations",
        "type": "book",
        "author": "Marcus Aurelius",
        "image_url": None,
        "url": "https://example.com/m",
    }
    assert sorted(tag["name"] for tag in item["tags"]) == ["Philosophy", "stoicism"]
    for tag in item["tags"]:
        assert set(tag) == {"id", "name", "color"}


async def test_standalone_highlights_are_filed_under_personal_notes(asgi_api: Api) -> None:
    item = await asgi_api.highlight("on its own")
    # The spec's Highlight always has a source; a standalone one is the user's own note.
    source = item["source"]
    assert source["type"] == "self" and source["name"] == "Personal notes"
    assert item["note"] is None and item["favorite"] is False and item["tags"] == []
    # Made once, on first use: later standalone highlights, single or bulk, join it.
    again = await asgi_api.highlight("another thought")
    bulk = await asgi_api.post(
        "/highlights/bulk", {"highlights": [{"content": "b1"}, {"content": "b2"}]}
    )
    assert bulk.status_code == 201, bulk.text
    ids = {again["source"]["id"]} | {h["source"]["id"] for h in bulk.json()["data"]}
    assert ids == {source["id"]}
    listed = (await asgi_api.get("/sources", params={"type": "self"})).json()["data"]
    assert [(s["id"], s["highlight_count"]) for s in listed] == [(source["id"], 4)]
    # The user's own POST /sources type=self is then the spec's 409 with that id.
    second = await asgi_api.post("/sources", {"name": "My notes", "type": "self"})
    assert second.status_code == 409 and second.json()["source_id"] == source["id"]


async def test_list_envelope_order_and_pagination(api: Api) -> None:
    made = [await api.highlight(f"highlight {i}") for i in range(5)]
    response = await api.get("/highlights", params={"per_page": 2})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "pagination"}
    assert body["pagination"] == {
        "page": 1,
        "per_page": 2,
        "total": 5,
        "total_pages": 3,
        "has_more": True,
    }
    # Most recent first.
    assert ids(response) == [made[4]["id"], made[3]["id"]]
    last = await api.get("/highlights", params={"per_page": 2, "page": 3})
    assert ids(last) == [made[0]["id"]]
    assert last.json()["pagination"]["has_more"] is False
    beyond = await api.get("/highlights", params={"per_page": 2, "page": 4})
    assert beyond.json()["data"] == []
    assert beyond.json()["pagination"]["has_more"] is False


async def test_list_default_per_page_is_20_and_max_100(asgi_api: Api) -> None:
    await asgi_api.post(
        "/highlights/bulk", {"highlights": [{"content": f"h{i}"} for i in range(100)]}
    )
    await asgi_api.highlight("one more")
    default = await asgi_api.get("/highlights")
    assert len(default.json()["data"]) == contract.DEFAULT_PER_PAGE
    assert default.json()["pagination"]["per_page"] == contract.DEFAULT_PER_PAGE
    assert default.json()["pagination"]["total_pages"] == 6
    capped = await asgi_api.get("/highlights", params={"per_page": 500})
    assert capped.status_code == 200
    assert len(capped.json()["data"]) == 100
    assert capped.json()["pagination"]["per_page"] == 100
    assert capped.json()["pagination"]["has_more"] is True


async def test_list_bad_query_values_are_400(asgi_api: Api) -> None:
    for params, name in [
        ({"per_page": "0"}, "per_page"),
        ({"per_page": "many"}, "per_page"),
        ({"page": "0"}, "page"),
        ({"page": "x"}, "page"),
        ({"favorite": "perhaps"}, "favorite"),
        ({"source_id": "not-a-uuid"}, "source_id"),
        ({"tag_id": "nope"}, "tag_id"),
        ({"updated_since": "yesterday"}, "updated_since"),
        ({"include_deleted": "2"}, "include_deleted"),
    ]:
        response = await asgi_api.get("/highlights", params=params)
        assert response.status_code == 400, (params, name)
        assert response.json()["code"] == "invalid_parameter"
        assert name in response.json()["fields"]


# --- list filters -------------------------------------------------------------------------


async def test_filter_by_source_id_including_an_article(asgi_api: Api) -> None:
    book = await asgi_api.source("Book")
    article_id = asgi_api.article(title="Saved page")
    in_book = await asgi_api.highlight("in the book", source_id=book["id"])
    in_article = await asgi_api.highlight("in the article", article_id=article_id)
    await asgi_api.highlight("elsewhere")
    by_book = await asgi_api.get("/highlights", params={"source_id": book["id"]})
    assert ids(by_book) == [in_book["id"]]
    by_article = await asgi_api.get("/highlights", params={"source_id": article_id})
    assert ids(by_article) == [in_article["id"]]
    assert by_article.json()["data"][0]["source"]["type"] == "article"
    assert by_article.json()["data"][0]["source"]["name"] == "Saved page"


async def test_filter_favorite(asgi_api: Api) -> None:
    liked = await asgi_api.highlight("liked", favorite=True)
    plain = await asgi_api.highlight("plain")
    assert ids(await asgi_api.get("/highlights", params={"favorite": "true"})) == [liked["id"]]
    assert ids(await asgi_api.get("/highlights", params={"favorite": "false"})) == [plain["id"]]


async def test_filter_tag_id_keeps_full_tag_list(asgi_api: Api) -> None:
    both = await asgi_api.highlight("both", tags=["alpha", "beta"])
    await asgi_api.highlight("beta only", tags=["beta"])
    alpha_id = next(t["id"] for t in both["tags"] if t["name"] == "alpha")
    response = await asgi_api.get("/highlights", params={"tag_id": alpha_id})
    assert ids(response) == [both["id"]]
    assert sorted(t["name"] for t in response.json()["data"][0]["tags"]) == ["alpha", "beta"]


async def test_filter_tag_name_is_case_insensitive(asgi_api: Api) -> None:
    tagged = await asgi_api.highlight("tagged", tags=["Reading"])
    await asgi_api.highlight("untagged")
    for name in ("reading", "READING", "Reading"):
        assert ids(await asgi_api.get("/highlights", params={"tag": name})) == [tagged["id"]]
    assert ids(await asgi_api.get("/highlights", params={"tag": "unknown"})) == []
    unknown_id = await asgi_api.get("/highlights", params={"tag_id": str(uuid.uuid4())})
    assert unknown_id.status_code == 200 and ids(unknown_id) == []


async def test_filter_updated_since(asgi_api: Api) -> None:
    old = await asgi_api.highlight("old")
    new = await asgi_api.highlight("new")
    asgi_api.sql(
        "UPDATE highlights SET updated_at = ? WHERE id = ?", (ts("2020-01-01T00:00:00Z"), old["id"])
    )
    asgi_api.sql(
        "UPDATE highlights SET updated_at = ? WHERE id = ?", (ts("2024-01-01T00:00:00Z"), new["id"])
    )
    since = await asgi_api.get("/highlights", params={"updated_since": "2023-06-01T00:00:00Z"})
    assert ids(since) == [new["id"]]
    # Any ISO 8601 form, including an offset, compares in UTC.
    offset_form = await asgi_api.get(
        "/highlights", params={"updated_since": "2020-01-01T01:30:00+02:00"}
    )
    assert set(ids(offset_form)) == {old["id"], new["id"]}
    # "after": an item updated exactly at the instant is not included.
    exact = await asgi_api.get("/highlights", params={"updated_since": "2024-01-01T00:00:00Z"})
    assert ids(exact) == []


async def test_include_deleted_lists_tombstones(api: Api) -> None:
    kept = await api.highlight("kept")
    gone = await api.highlight("gone")
    assert (await api.delete(f"/highlights/{gone['id']}")).status_code == 200
    live = await api.get("/highlights")
    assert ids(live) == [kept["id"]]
    assert "deleted" not in live.json()["data"][0]
    everything = await api.get("/highlights", params={"include_deleted": "true"})
    by_id = {item["id"]: item for item in everything.json()["data"]}
    assert set(by_id) == {kept["id"], gone["id"]}
    assert by_id[gone["id"]]["deleted"] is True
    assert "deleted" not in by_id[kept["id"]]
    assert everything.json()["pagination"]["total"] == 2
    # An incremental sync sees the deletion as an update.
    sync = await api.get(
        "/highlights",
        params={"include_deleted": "true", "updated_since": gone["updated_at"]},
    )
    assert ids(sync) == [gone["id"]]


async def test_include_metadata(asgi_api: Api) -> None:
    item = await asgi_api.highlight("with metadata", metadata={"k": [1, 2], "nested": {"a": None}})
    plain = await asgi_api.get("/highlights")
    assert "metadata" not in plain.json()["data"][0]
    rich = await asgi_api.get("/highlights", params={"include_metadata": "true"})
    assert rich.json()["data"][0]["metadata"] == {"k": [1, 2], "nested": {"a": None}}
    one = await asgi_api.get(f"/highlights/{item['id']}", params={"include_metadata": "true"})
    assert one.json()["data"]["metadata"] == {"k": [1, 2], "nested": {"a": None}}
    assert "metadata" not in (await asgi_api.get(f"/highlights/{item['id']}")).json()["data"]
    bare = await asgi_api.highlight("no metadata")
    one = await asgi_api.get(f"/highlights/{bare['id']}", params={"include_metadata": "1"})
    assert one.json()["data"]["metadata"] == {}


# --- GET /highlights/{id} -----------------------------------------------------------------


async def test_get_one(api: Api) -> None:
    book = await api.source("Book")
    item = await api.highlight("find me", source_id=book["id"], tags=["x"])
    response = await api.get(f"/highlights/{item['id']}")
    assert response.status_code == 200
    assert set(response.json()) == {"data"}
    assert response.json()["data"] == item


async def test_get_one_missing_or_malformed_is_404(asgi_api: Api) -> None:
    for bad in ["not-a-uuid", "123", str(uuid.uuid4()), "%20"]:
        response = await asgi_api.get(f"/highlights/{bad}")
        assert response.status_code == 404, bad
        assert response.json()["code"] == "not_found"


async def test_get_deleted_is_404(asgi_api: Api) -> None:
    item = await asgi_api.highlight("brief")
    await asgi_api.delete(f"/highlights/{item['id']}")
    assert (await asgi_api.get(f"/highlights/{item['id']}")).status_code == 404


async def test_get_accepts_upper_case_id(asgi_api: Api) -> None:
    item = await asgi_api.highlight("case")
    response = await asgi_api.get(f"/highlights/{item['id'].upper()}")
    assert response.status_code == 200
    assert response.json()["data"]["id"] == item["id"]


# --- random -------------------------------------------------------------------------------


async def test_random_is_an_object_without_count_and_an_array_with_it(api: Api) -> None:
    made = {(await api.highlight(f"r{i}"))["id"] for i in range(3)}
    one = await api.get("/highlights/random")
    assert one.status_code == 200
    assert set(one.json()) == {"data"}
    assert isinstance(one.json()["data"], dict)
    assert one.json()["data"]["id"] in made
    assert set(one.json()["data"]) >= HIGHLIGHT_FIELDS
    several = await api.get("/highlights/random", params={"count": 2})
    data = several.json()["data"]
    assert isinstance(data, list) and len(data) == 2
    assert len({item["id"] for item in data}) == 2 and {item["id"] for item in data} <= made
    single = await api.get("/highlights/random", params={"count": 1})
    assert isinstance(single.json()["data"], list) and len(single.json()["data"]) == 1
    more_than_exist = await api.get("/highlights/random", params={"count": 10})
    assert {item["id"] for item in more_than_exist.json()["data"]} == made


async def test_random_count_is_clamped_to_20(asgi_api: Api) -> None:
    await asgi_api.post(
        "/highlights/bulk", {"highlights": [{"content": f"h{i}"} for i in range(25)]}
    )
    response = await asgi_api.get("/highlights/random", params={"count": 50})
    assert response.status_code == 200
    assert len(response.json()["data"]) == 20
    assert (
        len((await asgi_api.get("/highlights/random", params={"count": 20})).json()["data"]) == 20
    )


async def test_random_bad_count_is_400(asgi_api: Api) -> None:
    for count in ["0", "-1", "two"]:
        await asgi_api.highlight("x")
        response = await asgi_api.get("/highlights/random", params={"count": count})
        assert response.status_code == 400, count
        assert response.json()["fields"].keys() == {"count"}


async def test_random_404_when_no_highlights(asgi_api: Api) -> None:
    response = await asgi_api.get("/highlights/random")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    with_count = await asgi_api.get("/highlights/random", params={"count": 3})
    assert with_count.status_code == 404
    # Deleted highlights do not count.
    item = await asgi_api.highlight("soon gone")
    await asgi_api.delete(f"/highlights/{item['id']}")
    assert (await asgi_api.get("/highlights/random")).status_code == 404


async def test_random_filters(asgi_api: Api) -> None:
    api = asgi_api
    book = await api.source("Book")
    podcast = await api.source("Cast", type="podcast")
    api.sql(
        "INSERT INTO sources(id, name, type, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
        (yt := str(uuid.uuid4()), "Old video", "youtube", ts("2020-01-01"), ts("2020-01-01")),
    )
    fav = await api.highlight("favourite", favorite=True, source_id=book["id"])
    tagged = await api.highlight("tagged", tags=["Gold"], source_id=podcast["id"])
    in_yt = await api.highlight("video", source_id=yt)
    await api.highlight("plain")

    async def pick(**params: Any) -> set[str]:
        response = await api.get("/highlights/random", params={"count": 20, **params})
        assert response.status_code == 200, response.text
        return {item["id"] for item in response.json()["data"]}

    assert await pick(favorite="true") == {fav["id"]}
    assert await pick(tag="gold") == {tagged["id"]}
    assert await pick(source_id=podcast["id"]) == {tagged["id"]}
    assert await pick(types="podcast") == {tagged["id"]}
    assert await pick(types="book,podcast") == {fav["id"], tagged["id"]}
    assert await pick(types="video") == {in_yt["id"]}  # video covers legacy youtube
    none = await api.get("/highlights/random", params={"types": "tweet"})
    assert none.status_code == 404
    bad = await api.get("/highlights/random", params={"types": "book,film"})
    assert bad.status_code == 400 and "types" in bad.json()["fields"]


# --- create: bounds and rules -------------------------------------------------------------


async def test_create_content_and_note_bounds(asgi_api: Api) -> None:
    limit = contract.MAX_HIGHLIGHT_TEXT
    at_limit = await asgi_api.post("/highlights", {"content": "c" * limit, "note": "n" * limit})
    assert at_limit.status_code == 201
    assert len(at_limit.json()["data"]["content"]) == limit
    assert len(at_limit.json()["data"]["note"]) == limit
    too_long = await asgi_api.post("/highlights", {"content": "c" * (limit + 1)})
    assert too_long.status_code == 422
    assert too_long.json()["code"] == "validation_failed"
    assert set(too_long.json()["fields"]) == {"content"}
    long_note = await asgi_api.post("/highlights", {"content": "ok", "note": "n" * (limit + 1)})
    assert long_note.status_code == 422 and set(long_note.json()["fields"]) == {"note"}
    # Characters, not bytes: as many non-ASCII characters fit.
    wide = await asgi_api.post("/highlights", {"content": "é" * limit})
    assert wide.status_code == 201


async def test_create_rejects(asgi_api: Api) -> None:
    for body, field in [
        ({}, "content"),
        ({"content": ""}, "content"),
        ({"content": "   "}, "content"),
        ({"content": 5}, "content"),
        ({"content": "x", "location": -1}, "location"),
        ({"content": "x", "location": "3"}, "location"),
        ({"content": "x", "url": "not a url"}, "url"),
        ({"content": "x", "url": "https://"}, "url"),
        ({"content": "x", "date": "last tuesday"}, "date"),
        ({"content": "x", "favorite": "yes"}, "favorite"),
        ({"content": "x", "source_id": "abc"}, "source_id"),
        ({"content": "x", "article_id": "abc"}, "article_id"),
        ({"content": "x", "tags": "one"}, "tags"),
        ({"content": "x", "tags": [""]}, "tags[0]"),
        ({"content": "x", "tags": ["ok", 3]}, "tags[1]"),
        ({"content": "x", "tags": ["t" * (contract.MAX_TAG_NAME + 1)]}, "tags[0]"),
        ({"content": "x", "metadata": [1]}, "metadata"),
    ]:
        response = await asgi_api.post("/highlights", body)
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "validation_failed"
        assert field in response.json()["fields"], response.json()
        assert asgi_api.scalar("SELECT count(*) FROM highlights") == 0


async def test_create_location_zero_and_plain_date(asgi_api: Api) -> None:
    item = await asgi_api.highlight("at the start", location=0, date="2024-02-29")
    assert item["location"] == 0
    assert item["date"].startswith("2024-02-29T00:00:00")


async def test_create_parent_rules(asgi_api: Api) -> None:
    book = await asgi_api.source("Book")
    article_id = asgi_api.article()
    both = await asgi_api.post(
        "/highlights", {"content": "x", "source_id": book["id"], "article_id": article_id}
    )
    assert both.status_code == 422 and both.json()["code"] == "validation_failed"
    unknown_source = await asgi_api.post(
        "/highlights", {"content": "x", "source_id": str(uuid.uuid4())}
    )
    assert unknown_source.status_code == 422
    assert set(unknown_source.json()["fields"]) == {"source_id"}
    unknown_article = await asgi_api.post(
        "/highlights", {"content": "x", "article_id": str(uuid.uuid4())}
    )
    assert unknown_article.status_code == 422
    assert set(unknown_article.json()["fields"]) == {"article_id"}
    # A book's id is not an article id.
    not_article = await asgi_api.post("/highlights", {"content": "x", "article_id": book["id"]})
    assert not_article.status_code == 422
    on_article = await asgi_api.highlight("on the article", article_id=article_id)
    assert on_article["source"]["id"] == article_id
    # An article is also a source: source_id works for it.
    via_source_id = await asgi_api.highlight("also on it", source_id=article_id)
    assert via_source_id["source"]["id"] == article_id
    assert asgi_api.scalar("SELECT count(*) FROM highlights") == 2


async def test_create_on_deleted_source_is_422(asgi_api: Api) -> None:
    book = await asgi_api.source("Gone")
    await asgi_api.delete(f"/sources/{book['id']}")
    response = await asgi_api.post("/highlights", {"content": "x", "source_id": book["id"]})
    assert response.status_code == 422 and "source_id" in response.json()["fields"]


async def test_create_tags_by_name_any_case_and_by_id(asgi_api: Api) -> None:
    first = await asgi_api.highlight("one", tags=["Ideas"])
    ideas = first["tags"][0]
    second = await asgi_api.highlight("two", tags=["IDEAS", "ideas", "new one"])
    assert [t["id"] for t in second["tags"] if t["name"] == "Ideas"] == [ideas["id"]]
    assert sorted(t["name"] for t in second["tags"]) == ["Ideas", "new one"]
    third = await asgi_api.highlight("three", tags=[ideas["id"]])
    assert third["tags"] == [ideas]
    assert asgi_api.scalar("SELECT count(*) FROM tags") == 2
    unknown = await asgi_api.post("/highlights", {"content": "x", "tags": [str(uuid.uuid4())]})
    assert unknown.status_code == 422 and set(unknown.json()["fields"]) == {"tags[0]"}


async def test_create_body_must_be_a_json_object(asgi_api: Api) -> None:
    for content in (b"", b"not json", b"[1, 2]", b'"text"'):
        response = await asgi_api.request(
            "POST", "/highlights", content=content, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 422, content
        assert response.json()["code"] == "validation_failed"
        assert "body" in response.json()["fields"]


async def test_unknown_fields_are_ignored(asgi_api: Api) -> None:
    item = await asgi_api.highlight("x", colour="red")
    assert "colour" not in item


# --- bulk ---------------------------------------------------------------------------------


async def test_bulk_creates_all_in_order(api: Api) -> None:
    book = await api.source("Book")
    response = await api.post(
        "/highlights/bulk",
        {
            "highlights": [
                {"content": "first", "source_id": book["id"], "tags": ["Bulk"]},
                {"content": "second", "tags": ["bulk", "two"]},
                {"content": "third", "favorite": True},
            ]
        },
    )
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert [item["content"] for item in data] == ["first", "second", "third"]
    assert data[0]["source"]["id"] == book["id"]
    assert data[0]["tags"][0]["id"] in {t["id"] for t in data[1]["tags"]}
    assert data[2]["favorite"] is True
    listed = await api.get("/highlights")
    assert listed.json()["pagination"]["total"] == 3


async def test_bulk_100_is_accepted_and_101_is_413(asgi_api: Api) -> None:
    items = [{"content": f"item {i}"} for i in range(101)]
    too_many = await asgi_api.post("/highlights/bulk", {"highlights": items})
    assert too_many.status_code == 413
    assert too_many.json()["code"] == "payload_too_large"
    assert asgi_api.scalar("SELECT count(*) FROM highlights") == 0
    ok = await asgi_api.post("/highlights/bulk", {"highlights": items[:100]})
    assert ok.status_code == 201
    assert len(ok.json()["data"]) == 100
    assert asgi_api.scalar("SELECT count(*) FROM highlights") == 100


async def test_bulk_is_all_or_nothing(api: Api) -> None:
    items: list[dict[str, Any]] = [
        {"content": f"fine {i}", "tags": [f"new-tag-{i}"]} for i in range(5)
    ]
    items[3] = {"content": ""}
    response = await api.post("/highlights/bulk", {"highlights": items})
    assert response.status_code == 422
    assert response.json()["code"] == "validation_failed"
    assert set(response.json()["fields"]) == {"highlights[3].content"}
    assert api.scalar("SELECT count(*) FROM highlights") == 0
    assert api.scalar("SELECT count(*) FROM tags") == 0


async def test_bulk_rolls_back_on_an_unknown_source_late_in_the_batch(asgi_api: Api) -> None:
    items: list[dict[str, Any]] = [{"content": f"ok {i}", "tags": ["t"]} for i in range(4)]
    items[3]["source_id"] = str(uuid.uuid4())
    response = await asgi_api.post("/highlights/bulk", {"highlights": items})
    assert response.status_code == 422
    assert set(response.json()["fields"]) == {"highlights[3].source_id"}
    assert asgi_api.scalar("SELECT count(*) FROM highlights") == 0
    assert asgi_api.scalar("SELECT count(*) FROM tags") == 0


async def test_bulk_names_every_bad_item(asgi_api: Api) -> None:
    items = [
        {"content": "ok"},
        {"content": "x", "location": -5},
        {"note": "no content"},
        {"content": "x", "tags": ["fine", ""]},
        "not an object",
    ]
    response = await asgi_api.post("/highlights/bulk", {"highlights": items})
    assert response.status_code == 422
    assert set(response.json()["fields"]) == {
        "highlights[1].location",
        "highlights[2].content",
        "highlights[3].tags[1]",
        "highlights[4]",
    }


async def test_bulk_needs_a_non_empty_array(asgi_api: Api) -> None:
    for body in [{}, {"highlights": "x"}, {"highlights": []}, {"items": []}]:
        response = await asgi_api.post("/highlights/bulk", body)
        assert response.status_code == 422, body
        assert "highlights" in response.json()["fields"]


# --- PATCH --------------------------------------------------------------------------------


async def test_patch_changes_only_present_fields(asgi_api: Api) -> None:
    item = await asgi_api.highlight(
        "original",
        note="a note",
        url="https://example.com/a",
        location=7,
        date="2024-01-01T00:00:00Z",
        tags=["keep"],
        metadata={"a": 1},
    )
    response = await asgi_api.patch(f"/highlights/{item['id']}", {"favorite": True})
    assert response.status_code == 200
    updated = response.json()["data"]
    assert updated["favorite"] is True
    for name in ("content", "note", "url", "location", "date", "tags", "source"):
        assert updated[name] == item[name], name
    assert updated["updated_at"] >= item["updated_at"]
    fetched = await asgi_api.get(f"/highlights/{item['id']}", params={"include_metadata": "true"})
    assert fetched.json()["data"]["metadata"] == {"a": 1}


async def test_patch_null_clears(api: Api) -> None:
    item = await api.highlight(
        "text",
        note="n",
        url="https://example.com",
        location=3,
        date="2024-01-01",
        metadata={"a": 1},
    )
    response = await api.patch(
        f"/highlights/{item['id']}",
        {"note": None, "url": None, "location": None, "date": None, "metadata": None},
    )
    assert response.status_code == 200
    cleared = (
        await api.get(f"/highlights/{item['id']}", params={"include_metadata": "true"})
    ).json()["data"]
    assert cleared["note"] is None
    assert cleared["url"] is None
    assert cleared["location"] is None
    assert cleared["date"] is None
    assert cleared["metadata"] == {}
    assert cleared["content"] == "text"


async def test_patch_tags_replace_the_set(asgi_api: Api) -> None:
    item = await asgi_api.highlight("t", tags=["one", "two"])
    response = await asgi_api.patch(f"/highlights/{item['id']}", {"tags": ["TWO", "three"]})
    assert response.status_code == 200
    assert sorted(t["name"] for t in response.json()["data"]["tags"]) == ["three", "two"]
    cleared = await asgi_api.patch(f"/highlights/{item['id']}", {"tags": []})
    assert cleared.json()["data"]["tags"] == []
    # The tags themselves remain.
    assert asgi_api.scalar("SELECT count(*) FROM tags") == 3


async def test_patch_tags_null_clears_them(asgi_api: Api) -> None:
    item = await asgi_api.highlight("t", tags=["one"])
    response = await asgi_api.patch(f"/highlights/{item['id']}", {"tags": None})
    assert response.status_code == 200
    assert response.json()["data"]["tags"] == []


async def test_patch_content_and_bounds(asgi_api: Api) -> None:
    item = await asgi_api.highlight("before")
    ok = await asgi_api.patch(f"/highlights/{item['id']}", {"content": "after"})
    assert ok.json()["data"]["content"] == "after"
    for body, field in (
        ({"content": None}, "content"),
        ({"content": ""}, "content"),
        ({"content": "c" * (contract.MAX_HIGHLIGHT_TEXT + 1)}, "content"),
        ({"note": "n" * (contract.MAX_HIGHLIGHT_TEXT + 1)}, "note"),
        ({"location": -1}, "location"),
        ({"favorite": "no"}, "favorite"),
        ({"url": "nope"}, "url"),
        ({"date": "soon"}, "date"),
    ):
        response = await asgi_api.patch(f"/highlights/{item['id']}", body)
        assert response.status_code == 422, body
        assert field in response.json()["fields"], body
    assert (await asgi_api.get(f"/highlights/{item['id']}")).json()["data"]["content"] == "after"


async def test_patch_missing_is_404(asgi_api: Api) -> None:
    for bad in ("nope", str(uuid.uuid4())):
        response = await asgi_api.patch(f"/highlights/{bad}", {"favorite": True})
        assert response.status_code == 404, bad
        assert response.json()["code"] == "not_found"
    item = await asgi_api.highlight("deleted")
    await asgi_api.delete(f"/highlights/{item['id']}")
    assert (await asgi_api.patch(f"/highlights/{item['id']}", {"note": "x"})).status_code == 404


# --- DELETE -------------------------------------------------------------------------------


async def test_delete_is_soft_and_idempotent(asgi_api: Api) -> None:
    item = await asgi_api.highlight("bye")
    first = await asgi_api.delete(f"/highlights/{item['id']}")
    assert first.status_code == 200
    again = await asgi_api.delete(f"/highlights/{item['id']}")
    assert again.status_code == 200
    assert asgi_api.scalar("SELECT count(*) FROM highlights WHERE id = ?", (item["id"],)) == 1
    assert (await asgi_api.get("/highlights")).json()["data"] == []


async def test_delete_missing_is_404(asgi_api: Api) -> None:
    for bad in ("nope", str(uuid.uuid4())):
        response = await asgi_api.delete(f"/highlights/{bad}")
        assert response.status_code == 404, bad
        assert response.json()["code"] == "not_found"


# --- tag add / remove ---------------------------------------------------------------------


async def test_add_and_remove_tags_return_the_full_list(api: Api) -> None:
    item = await api.highlight("t", tags=["Existing"])
    added = await api.post(f"/highlights/{item['id']}/tags", {"tags": ["existing", "New"]})
    assert added.status_code == 200
    names = sorted(t["name"] for t in added.json()["data"])
    assert names == ["Existing", "New"]
    for tag in added.json()["data"]:
        assert set(tag) == {"id", "name", "color"}
    new_id = next(t["id"] for t in added.json()["data"] if t["name"] == "New")
    removed = await api.delete(f"/highlights/{item['id']}/tags", {"tags": ["EXISTING"]})
    assert removed.status_code == 200
    assert [t["name"] for t in removed.json()["data"]] == ["New"]
    by_id = await api.delete(f"/highlights/{item['id']}/tags", {"tags": [new_id, "never-was"]})
    assert by_id.status_code == 200 and by_id.json()["data"] == []
    # Removing detaches; the tags themselves remain.
    assert api.scalar("SELECT count(*) FROM tags") == 2
    fetched = await api.get(f"/highlights/{item['id']}")
    assert fetched.json()["data"]["tags"] == []


async def test_tag_endpoints_404_and_422(asgi_api: Api) -> None:
    for method in ("POST", "DELETE"):
        for bad in ("nope", str(uuid.uuid4())):
            response = await asgi_api.request(
                method, f"/highlights/{bad}/tags", json={"tags": ["a"]}
            )
            assert response.status_code == 404, (method, bad)
            assert response.json()["code"] == "not_found"
        item = await asgi_api.highlight("t")
        missing = await asgi_api.request(method, f"/highlights/{item['id']}/tags", json={})
        assert missing.status_code == 422 and "tags" in missing.json()["fields"]
    # A 404 must not have created the tag it was asked to add.
    assert asgi_api.scalar("SELECT count(*) FROM tags") == 0
