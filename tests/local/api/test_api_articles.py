"""/articles: list with filters and sorting, save, read in chunks, patch, tags; no DELETE.

Articles are written straight into SQLite (already parsed) where a test needs a body or
specific columns: fetching is another module's job and its tests' business. URLs point at
127.0.0.1 so that a background fetcher, if running, sends nothing off this machine.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_testkit import Api, only_page, ts

from screvi_mcp import contract

ARTICLE_FIELDS = {
    "id",
    "title",
    "author",
    "url",
    "canonical_url",
    "excerpt",
    "status",
    "home_status",
    "favorite",
    "progress_percentage",
    "reading_time_minutes",
    "word_count",
    "source_domain",
    "site_name",
    "language",
    "saved_at",
    "published_date",
    "updated_at",
    "parse_state",
    "note",
    "deleted",
    "image_url",
    "screvi_url",
    "highlight_count",
    "tags",
}
CONTENT_FIELDS = {
    "content_format",
    "content",
    "content_length",
    "content_offset",
    "content_truncated",
    "parse_error",
    "parse_failure",
    "pdf_url",
    "epub_url",
    "last_fetched_at",
    "started_reading_at",
    "completed_reading_at",
    "summary",
    "transcript",
    "highlights",
}
LOCAL = "http://127.0.0.1:9"


def ids(response: Any) -> list[str]:
    return [item["id"] for item in response.json()["data"]]


# --- list ---------------------------------------------------------------------------------


async def test_list_shape_and_fields(api: Api) -> None:
    article_id = api.article(
        f"{LOCAL}/post",
        title="A post",
        excerpt="short",
        word_count=1200,
        reading_time_minutes=5,
        site_name="Local",
    )
    await api.highlight("quoted", article_id=article_id)
    response = await api.get("/articles")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "pagination"}
    assert body["pagination"] == only_page(1)
    item = body["data"][0]
    assert set(item) == ARTICLE_FIELDS
    assert item["id"] == article_id
    assert item["title"] == "A post"
    assert item["url"] == f"{LOCAL}/post"
    assert item["status"] == "unread"
    assert item["home_status"] == "inbox"
    assert item["favorite"] is False
    assert item["progress_percentage"] == 0
    assert item["word_count"] == 1200
    assert item["reading_time_minutes"] == 5
    assert item["parse_state"] == "parsed"
    assert item["deleted"] is False
    assert item["highlight_count"] == 1
    assert item["tags"] == []
    assert item["source_domain"] == "127.0.0.1"
    assert isinstance(item["screvi_url"], str) and article_id in item["screvi_url"]
    assert item["screvi_url"].startswith("http")


async def test_list_includes_articles_without_highlights(asgi_api: Api) -> None:
    article_id = asgi_api.article()
    assert ids(await asgi_api.get("/articles")) == [article_id]


async def test_list_filters(asgi_api: Api) -> None:
    api = asgi_api
    a = api.article(
        f"{LOCAL}/alpha",
        title="Alpha rising",
        status="read",
        home_status="later",
        favorite=1,
        saved_at=ts("2024-01-10T00:00:00Z"),
    )
    b = api.article(
        f"{LOCAL}/beta",
        title="Beta notes",
        status="reading",
        home_status="archive",
        saved_at=ts("2024-02-10T00:00:00Z"),
    )
    c = api.article("http://127.0.0.2:9/gamma", title="Gamma", saved_at=ts("2024-03-10T00:00:00Z"))
    api.sql("UPDATE sources SET author = ? WHERE id = ?", ("Ada Lovelace", c))
    await api.highlight("on b", article_id=b)
    await api.post(f"/articles/{a}/tags", {"tags": ["Science"]})
    science = (await api.get("/tags")).json()["data"][0]["id"]

    async def listed(**params: Any) -> set[str]:
        response = await api.get("/articles", params=params)
        assert response.status_code == 200, response.text
        return set(ids(response))

    assert await listed(q="rising") == {a}
    assert await listed(q="lovelace") == {c}  # author
    assert await listed(q="127.0.0.2") == {c}  # domain
    assert await listed(status="read") == {a}
    assert await listed(status="reading") == {b}
    assert await listed(home_status="archive") == {b}
    assert await listed(home_status="inbox") == {c}
    assert await listed(favorite="true") == {a}
    assert await listed(favorite="false") == {b, c}
    assert await listed(has_highlights="true") == {b}
    assert await listed(has_highlights="false") == {a, c}
    assert await listed(tag="science") == {a}
    assert await listed(tag="SCIENCE") == {a}
    assert await listed(tag=science) == {a}
    assert await listed(tag="nothing") == set()
    assert await listed(saved_since="2024-02-10T00:00:00Z") == {b, c}  # at or after
    assert await listed(saved_before="2024-02-10T00:00:00Z") == {a}  # strictly before
    assert await listed(saved_since="2024-01-15", saved_before="2024-03-01") == {b}
    api.sql("UPDATE sources SET updated_at = ?", (ts("2020-01-01"),))
    api.sql("UPDATE sources SET updated_at = ? WHERE id = ?", (ts("2024-06-01"), b))
    assert await listed(updated_since="2024-01-01T00:00:00Z") == {b}


async def test_list_bad_values_are_400(asgi_api: Api) -> None:
    for params, name in [
        ({"status": "done"}, "status"),
        ({"home_status": "trash"}, "home_status"),
        ({"sort_by": "title"}, "sort_by"),
        ({"order": "up"}, "order"),
        ({"favorite": "x"}, "favorite"),
        ({"saved_since": "then"}, "saved_since"),
        ({"per_page": "0"}, "per_page"),
    ]:
        response = await asgi_api.get("/articles", params=params)
        assert response.status_code == 400, (params, name)
        assert response.json()["code"] == "invalid_parameter"
        assert name in response.json()["fields"]


async def test_list_sorting(asgi_api: Api) -> None:
    api = asgi_api
    old = api.article(
        title="old",
        saved_at=ts("2024-01-01"),
        reading_time_minutes=30,
        published_date=ts("2023-05-01"),
    )
    mid = api.article(title="mid", saved_at=ts("2024-02-01"), reading_time_minutes=3)
    new = api.article(
        title="new",
        saved_at=ts("2024-03-01"),
        reading_time_minutes=10,
        published_date=ts("2022-01-01"),
    )
    for i in range(2):
        await api.highlight(f"h{i}", article_id=mid)
    await api.highlight("h", article_id=old)

    async def order(**params: Any) -> list[str]:
        return ids(await api.get("/articles", params=params))

    assert await order() == [new, mid, old]  # newest saved first by default
    assert await order(order="asc") == [old, mid, new]
    assert await order(sort_by="reading_time_minutes") == [old, new, mid]
    assert await order(sort_by="reading_time_minutes", order="asc") == [mid, new, old]
    assert await order(sort_by="highlight_count") == [mid, old, new]
    # Articles without a published date come last either way.
    assert (await order(sort_by="published_date"))[:2] == [old, new]
    assert (await order(sort_by="published_date", order="asc"))[:2] == [new, old]
    assert (await order(sort_by="published_date", order="asc"))[2] == mid
    api.sql("UPDATE sources SET updated_at = ? WHERE id = ?", (ts("2030-01-01"), old))
    assert (await order(sort_by="updated_at"))[0] == old


async def test_list_pagination_and_cap(asgi_api: Api) -> None:
    for i in range(3):
        asgi_api.article(title=f"a{i}")
    page = await asgi_api.get("/articles", params={"per_page": 2, "page": 2})
    assert len(page.json()["data"]) == 1
    assert page.json()["pagination"] == {
        "page": 2,
        "per_page": 2,
        "total": 3,
        "total_pages": 2,
        "has_more": False,
    }
    capped = await asgi_api.get("/articles", params={"per_page": contract.MAX_PER_PAGE + 1})
    assert capped.json()["pagination"]["per_page"] == contract.MAX_PER_PAGE


async def test_list_include_deleted(asgi_api: Api) -> None:
    kept = asgi_api.article(title="kept")
    gone = asgi_api.article(title="gone")
    asgi_api.sql("UPDATE sources SET deleted_at = ? WHERE id = ?", (ts("2024-01-01"), gone))
    assert ids(await asgi_api.get("/articles")) == [kept]
    everything = await asgi_api.get("/articles", params={"include_deleted": "true"})
    flags = {item["id"]: item["deleted"] for item in everything.json()["data"]}
    assert flags == {kept: False, gone: True}


# --- POST ---------------------------------------------------------------------------------


@pytest.fixture
def loopback_pages_may_be_saved(monkeypatch: pytest.MonkeyPatch) -> None:
    """LOCAL is loopback: refused at save time unless private networks are allowed."""
    monkeypatch.setenv("SCREVI_ALLOW_PRIVATE_NETWORKS", "1")


@pytest.mark.usefixtures("loopback_pages_may_be_saved")
async def test_save_new_then_duplicate(api: Api) -> None:
    url = f"{LOCAL}/new-article-{uuid.uuid4().hex}"
    created = await api.post("/articles", {"url": url, "tags": ["ToRead"]})
    assert created.status_code == 201, created.text
    data = created.json()["data"]
    assert data["parse_state"] == "queued"
    assert data["duplicate"] is False
    article_id = data["id"]
    uuid.UUID(article_id)
    again = await api.post("/articles", {"url": url})
    assert again.status_code == 200
    assert again.json()["data"]["id"] == article_id
    assert again.json()["data"]["duplicate"] is True
    # The row exists at once, tagged, and is listed.
    fetched = await api.get(f"/articles/{article_id}")
    assert fetched.status_code == 200
    assert fetched.json()["data"]["url"] == url
    assert fetched.json()["data"]["parse_state"] in {"queued", "fetching", "parsed", "failed"}
    assert [t["name"] for t in fetched.json()["data"]["tags"]] == ["ToRead"]
    assert article_id in ids(await api.get("/articles"))
    assert api.scalar("SELECT count(*) FROM articles") == 1


async def test_save_rejects(asgi_api: Api) -> None:
    for body in [
        {},
        {"url": ""},
        {"url": "not a url"},
        {"url": "ftp://127.0.0.1/file"},
        {"url": 5},
        {"url": "https://"},
        {"url": f"{LOCAL}/x", "tags": "one"},
    ]:
        response = await asgi_api.post("/articles", body)
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "validation_failed"
        assert response.json()["fields"]
        assert asgi_api.scalar("SELECT count(*) FROM articles") == 0


# --- GET /articles/{id} -------------------------------------------------------------------


async def test_get_with_content_shape(api: Api) -> None:
    html = "<p>" + "word " * 500 + "</p>"
    article_id = api.article(
        title="Body", content_html=html, content_text="plain\n\ntext", summary="sum"
    )
    item = await api.highlight("quote", article_id=article_id, location=5)
    response = await api.get(f"/articles/{article_id}")
    assert response.status_code == 200
    assert set(response.json()) == {"data"}
    data = response.json()["data"]
    assert set(data) == ARTICLE_FIELDS | CONTENT_FIELDS
    assert data["content_format"] == "html"
    assert data["content"] == html
    assert data["content_length"] == len(html)
    assert data["content_offset"] == 0
    assert data["content_truncated"] is False
    assert data["summary"] == "sum"
    assert data["parse_failure"] is None and data["transcript"] is None
    assert [h["id"] for h in data["highlights"]] == [item["id"]]
    text = await api.get(f"/articles/{article_id}", params={"format": "text"})
    assert text.json()["data"]["content_format"] == "text"
    assert text.json()["data"]["content"] == "plain\n\ntext"
    assert text.json()["data"]["content_length"] == len("plain\n\ntext")


async def test_get_without_highlights_when_preferred(api: Api) -> None:
    """`Prefer: omit-highlights` (our RFC 7240 extension) leaves the field out and says so;
    other preference tokens beside it, or alone, change nothing."""
    article_id = api.article(content_html="<p>body</p>", content_text="body")
    await api.highlight("quote", article_id=article_id)
    full = await api.get(f"/articles/{article_id}")
    omitted = await api.get(
        f"/articles/{article_id}", headers={"Prefer": "respond-async, Omit-Highlights; x=1"}
    )
    unrelated = await api.get(f"/articles/{article_id}", headers={"Prefer": "return=minimal"})
    assert omitted.status_code == 200
    assert omitted.headers["Preference-Applied"] == "omit-highlights"
    assert "Preference-Applied" not in full.headers
    assert set(omitted.json()["data"]) == ARTICLE_FIELDS | CONTENT_FIELDS - {"highlights"}
    without = dict(full.json()["data"])
    assert len(without.pop("highlights")) == 1
    assert omitted.json()["data"] == without
    assert unrelated.json()["data"] == full.json()["data"]


async def test_get_content_chunks(asgi_api: Api) -> None:
    body = "".join(chr(ord("a") + i % 26) for i in range(2500))
    article_id = asgi_api.article(content_html=body, content_text=body.upper())

    async def read(**params: Any) -> dict[str, Any]:
        response = await asgi_api.get(f"/articles/{article_id}", params=params)
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()["data"]
        return data

    first = await read(max_chars=1000)
    assert first["content"] == body[:1000]
    assert (first["content_length"], first["content_offset"]) == (2500, 0)
    assert first["content_truncated"] is True
    second = await read(offset=1000, max_chars=1000)
    assert second["content"] == body[1000:2000]
    assert second["content_offset"] == 1000 and second["content_truncated"] is True
    last = await read(offset=2000, max_chars=1000)
    assert last["content"] == body[2000:]
    assert last["content_truncated"] is False
    exact = await read(offset=1500, max_chars=1000)
    assert exact["content"] == body[1500:] and exact["content_truncated"] is False
    tail = await read(offset=2400)
    assert tail["content"] == body[2400:] and tail["content_truncated"] is False
    past = await read(offset=5000)
    assert past["content"] == "" and past["content_length"] == 2500
    assert past["content_offset"] == 5000 and past["content_truncated"] is False
    text = await read(format="text", offset=10, max_chars=1000)
    assert text["content"] == body.upper()[10:1010]
    assert text["content_truncated"] is True
    for chunk in (first, second, last, exact, tail, text):
        assert chunk["content_truncated"] == (
            chunk["content_offset"] + len(chunk["content"]) < chunk["content_length"]
        )


async def test_get_content_counts_characters_not_bytes(asgi_api: Api) -> None:
    body = "é😀" * 700  # 1400 characters, several bytes each
    article_id = asgi_api.article(content_html=body)
    response = await asgi_api.get(f"/articles/{article_id}", params={"max_chars": 1000})
    data = response.json()["data"]
    assert data["content_length"] == 1400
    assert data["content"] == body[:1000]
    assert data["content_truncated"] is True


async def test_get_before_fetching_has_null_content(asgi_api: Api) -> None:
    article_id = asgi_api.article(parse_state="queued", content_html=None)
    data = (await asgi_api.get(f"/articles/{article_id}")).json()["data"]
    assert data["content"] is None
    assert data["content_length"] == 0
    assert data["content_truncated"] is False


async def test_get_bad_parameters_are_400(asgi_api: Api) -> None:
    for params, name in [
        ({"max_chars": str(contract.MIN_MAX_CHARS - 1)}, "max_chars"),
        ({"max_chars": "0"}, "max_chars"),
        ({"max_chars": "lots"}, "max_chars"),
        ({"offset": "-1"}, "offset"),
        ({"offset": "x"}, "offset"),
        ({"format": "markdown"}, "format"),
    ]:
        article_id = asgi_api.article(content_html="<p>x</p>")
        response = await asgi_api.get(f"/articles/{article_id}", params=params)
        assert response.status_code == 400, (params, name)
        assert response.json()["code"] == "invalid_parameter"
        assert name in response.json()["fields"]


async def test_get_missing_is_404(asgi_api: Api) -> None:
    for bad in ["nope", str(uuid.uuid4())]:
        response = await asgi_api.get(f"/articles/{bad}")
        assert response.status_code == 404 and response.json()["code"] == "not_found"


async def test_a_book_is_not_an_article(asgi_api: Api) -> None:
    book = await asgi_api.source("Book")
    assert (await asgi_api.get(f"/articles/{book['id']}")).status_code == 404
    assert (await asgi_api.patch(f"/articles/{book['id']}", {"favorite": True})).status_code == 404


# --- PATCH --------------------------------------------------------------------------------


async def test_patch_fields(api: Api) -> None:
    article_id = api.article(title="Old title", excerpt="old excerpt")
    response = await api.patch(
        f"/articles/{article_id}",
        {"home_status": "later", "favorite": True, "title": "New title", "note": "my note"},
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert set(data) == ARTICLE_FIELDS
    assert data["home_status"] == "later"
    assert data["favorite"] is True
    assert data["title"] == "New title"
    assert data["note"] == "my note"
    assert data["excerpt"] == "old excerpt"
    cleared = await api.patch(f"/articles/{article_id}", {"excerpt": None, "note": None})
    assert cleared.json()["data"]["excerpt"] is None
    assert cleared.json()["data"]["note"] is None
    assert cleared.json()["data"]["title"] == "New title"
    assert cleared.json()["data"]["home_status"] == "later"


async def test_patch_tags_replace(asgi_api: Api) -> None:
    article_id = asgi_api.article()
    await asgi_api.post(f"/articles/{article_id}/tags", {"tags": ["a", "b"]})
    response = await asgi_api.patch(f"/articles/{article_id}", {"tags": ["B", "c"]})
    assert sorted(t["name"] for t in response.json()["data"]["tags"]) == ["b", "c"]


async def test_patch_length_bounds(asgi_api: Api) -> None:
    for field, limit in [("title", 500), ("excerpt", 2000), ("note", 10000)]:
        article_id = asgi_api.article()
        ok = await asgi_api.patch(f"/articles/{article_id}", {field: "x" * limit})
        assert ok.status_code == 200, (field, limit)
        assert ok.json()["data"][field] == "x" * limit
        too_long = await asgi_api.patch(f"/articles/{article_id}", {field: "x" * (limit + 1)})
        assert too_long.status_code == 422, (field, limit)
        assert too_long.json()["code"] == "validation_failed"
        assert set(too_long.json()["fields"]) == {field}


async def test_patch_rejects(asgi_api: Api) -> None:
    for body, field in [
        ({"home_status": "trash"}, "home_status"),
        ({"home_status": None}, "home_status"),
        ({"favorite": "yes"}, "favorite"),
        ({"tags": [""]}, "tags[0]"),
    ]:
        article_id = asgi_api.article()
        response = await asgi_api.patch(f"/articles/{article_id}", body)
        assert response.status_code == 422, (body, field)
        assert field in response.json()["fields"]


async def test_patch_missing_is_404(asgi_api: Api) -> None:
    for bad in ("nope", str(uuid.uuid4())):
        response = await asgi_api.patch(f"/articles/{bad}", {"favorite": True})
        assert response.status_code == 404 and response.json()["code"] == "not_found"


# --- tags ---------------------------------------------------------------------------------


async def test_article_tags_add_and_remove(api: Api) -> None:
    article_id = api.article()
    added = await api.post(f"/articles/{article_id}/tags", {"tags": ["One", "two"]})
    assert added.status_code == 200
    assert sorted(t["name"] for t in added.json()["data"]) == ["One", "two"]
    again = await api.post(f"/articles/{article_id}/tags", {"tags": ["ONE", "three"]})
    assert sorted(t["name"] for t in again.json()["data"]) == ["One", "three", "two"]
    removed = await api.delete(f"/articles/{article_id}/tags", {"tags": ["one", "absent"]})
    assert removed.status_code == 200
    assert sorted(t["name"] for t in removed.json()["data"]) == ["three", "two"]
    assert api.scalar("SELECT count(*) FROM tags") == 3
    for method in ("POST", "DELETE"):
        missing = await api.request(method, f"/articles/{uuid.uuid4()}/tags", json={"tags": ["x"]})
        assert missing.status_code == 404, method


async def test_no_delete_for_articles(api: Api) -> None:
    article_id = api.article()
    response = await api.delete(f"/articles/{article_id}")
    assert response.status_code in (404, 405)
    assert "code" in response.json()
    assert (await api.get(f"/articles/{article_id}")).status_code == 200
