"""What the client puts on the wire: paths, query strings, partial bodies, and the bounds it
checks before spending a request."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from client_testkit import HIGHLIGHT, FaultServer, MockClientFactory, json_reply

from screvi_mcp import contract
from screvi_mcp.client import (
    UNSET,
    InvalidParameterError,
    NewHighlight,
    NotFoundError,
    PayloadTooLargeError,
    ValidationFailedError,
)
from screvi_mcp.models import Highlight

ONE = json_reply(200, {"data": HIGHLIGHT})
TAG = {"id": "44444444-4444-4444-8444-444444444444", "name": "ideas", "color": None}


def page_of(ids: list[str], page: int, total_pages: int, per_page: int = 2) -> httpx.Response:
    return json_reply(
        200,
        {
            "data": [{**HIGHLIGHT, "id": i} for i in ids],
            "pagination": {
                "page": page,
                "per_page": per_page,
                "total": total_pages * per_page,
                "total_pages": total_pages,
                "has_more": page < total_pages,
            },
        },
    )


async def test_list_query_encodes_booleans_and_utc_timestamps(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([page_of([], 1, 1)])
    since = datetime(2026, 3, 1, 14, 30, tzinfo=timezone(timedelta(hours=2)))
    async with mock_client(server) as client:
        await client.list_highlights(
            page=2, per_page=100, favorite=False, include_deleted=True, updated_since=since
        )
    sent = server.sent[0]
    assert sent.path == "/api/v1/highlights"
    assert sent.params == {
        "page": "2",
        "per_page": "100",
        "favorite": "false",
        "include_deleted": "true",
        "updated_since": "2026-03-01T12:30:00Z",
    }


async def test_search_sends_types_comma_separated_and_leaves_defaults_to_the_server(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([page_of([], 1, 1)])
    async with mock_client(server) as client:
        await client.search("stoic calm", types=["book", "podcast"], verify=True)
    assert server.sent[0].path == "/api/v1/search"
    assert server.sent[0].params == {
        "q": "stoic calm",
        "types": "book,podcast",
        "verify": "true",
        "page": "1",
        "per_page": "20",
    }


async def test_ids_are_one_escaped_path_segment(mock_client: MockClientFactory) -> None:
    server = FaultServer([ONE])
    async with mock_client(server) as client:
        await client.get_highlight("a?b#c %d")
    assert server.sent[0].raw_path == "/api/v1/highlights/a%3Fb%23c%20%25d"


@pytest.mark.parametrize("bad_id", ["  ", "../tags", "a/b", "..", "."])
async def test_blank_or_path_like_id_is_refused_before_sending(
    mock_client: MockClientFactory, bad_id: str
) -> None:
    # Servers decode %2F back into a slash, and httpx resolves dot segments: either would
    # reach another endpoint. No id holds them: the spec's 404 for a malformed id.
    server = FaultServer([ONE])
    async with mock_client(server) as client:
        with pytest.raises(NotFoundError):
            await client.get_highlight(bad_id)
    assert server.sent == []


async def test_update_sends_only_given_fields_and_null_to_clear(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([ONE])
    async with mock_client(server) as client:
        await client.update_highlight(HIGHLIGHT["id"], note=None, favorite=True, url=UNSET)
        await client.update_highlight(HIGHLIGHT["id"], tags=[])
        await client.update_highlight(HIGHLIGHT["id"])
    assert [s.body for s in server.sent] == [{"note": None, "favorite": True}, {"tags": []}, {}]
    assert {s.method for s in server.sent} == {"PATCH"}


async def test_article_and_source_updates_are_partial_too(mock_client: MockClientFactory) -> None:
    article = {"id": "a1", "url": "https://example.com/", "tags": []}
    source = {"id": "s1", "name": "Meditations", "type": "book"}
    server = FaultServer([json_reply(200, {"data": article}), json_reply(200, {"data": source})])
    async with mock_client(server) as client:
        await client.update_article("a1", home_status="archive", excerpt=None)
        await client.update_source("s1", author="Marcus Aurelius", published_date=None)
    assert server.sent[0].body == {"home_status": "archive", "excerpt": None}
    assert server.sent[1].body == {"author": "Marcus Aurelius", "published_date": None}


async def test_tag_removal_is_a_delete_with_a_json_body(mock_client: MockClientFactory) -> None:
    server = FaultServer([json_reply(200, {"data": [TAG]})])
    async with mock_client(server) as client:
        tags = await client.remove_highlight_tags(HIGHLIGHT["id"], ["Old", "stale"])
        await client.remove_article_tags("a1", ["x"])
    assert server.sent[0].method == "DELETE"
    assert server.sent[0].path == f"/api/v1/highlights/{HIGHLIGHT['id']}/tags"
    assert server.sent[0].body == {"tags": ["Old", "stale"]}
    assert server.sent[1].body == {"tags": ["x"]}
    assert [t.name for t in tags] == ["ideas"]


@pytest.mark.parametrize(
    "payload",
    [{"data": [TAG]}, [TAG], {"data": {"tags": [TAG]}}, {"tags": [TAG]}],
    ids=["data-list", "bare-list", "data-tags", "tags"],
)
async def test_tag_list_answers_are_read_in_any_envelope(
    mock_client: MockClientFactory, payload: Any
) -> None:
    server = FaultServer([json_reply(200, payload)])
    async with mock_client(server) as client:
        tags = await client.add_highlight_tags(HIGHLIGHT["id"], ["ideas"])
    assert [t.id for t in tags] == [TAG["id"]]


async def test_a_single_tag_string_is_one_tag_not_its_letters(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([json_reply(200, {"data": [TAG]})])
    async with mock_client(server) as client:
        await client.add_article_tags("a1", "ideas")  # type: ignore[arg-type]
    assert server.sent[0].body == {"tags": ["ideas"]}


async def test_delete_source_sends_cascade_only_when_asked(mock_client: MockClientFactory) -> None:
    server = FaultServer([json_reply(200, {"data": {"deleted": True}})])
    async with mock_client(server) as client:
        await client.delete_source("s1")
        result = await client.delete_source("s1", cascade=True)
    assert server.sent[0].params == {}
    assert server.sent[1].params == {"cascade": "true"}
    assert result == {"deleted": True}


async def test_random_is_always_a_list(mock_client: MockClientFactory) -> None:
    server = FaultServer([ONE, json_reply(200, {"data": [HIGHLIGHT, HIGHLIGHT]})])
    async with mock_client(server) as client:
        single = await client.get_random_highlights()
        several = await client.get_random_highlights(count=2)
    assert len(single) == 1
    assert len(several) == 2
    assert "count" not in server.sent[0].params
    assert server.sent[1].params["count"] == "2"


async def test_create_tag_reports_whether_it_was_new(mock_client: MockClientFactory) -> None:
    server = FaultServer([json_reply(201, {"data": TAG}), json_reply(200, {"data": TAG})])
    async with mock_client(server) as client:
        new = await client.create_tag("ideas")
        existing = await client.create_tag("IDEAS", color="#ff0000")
    assert (new.created, existing.created) == (True, False)
    assert server.sent[1].body == {"name": "IDEAS", "color": "#ff0000"}


async def test_create_highlight_sends_only_what_was_given(mock_client: MockClientFactory) -> None:
    server = FaultServer([json_reply(201, {"data": HIGHLIGHT})])
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    async with mock_client(server) as client:
        await client.create_highlight("text", favorite=False, date=when, tags=["a"], location=0)
    assert server.sent[0].body == {
        "content": "text",
        "favorite": False,
        "date": "2026-01-02T03:04:05Z",
        "tags": ["a"],
        "location": 0,
    }


# Bounds checked before sending -----------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda c: c.list_highlights(per_page=contract.MAX_PER_PAGE + 1), "per_page"),
        (lambda c: c.list_sources(page=0), "page"),
        (lambda c: c.search("x", per_page=contract.MAX_SEARCH_PER_PAGE + 1), "per_page"),
        (lambda c: c.search("x" * (contract.MAX_QUERY_CHARS + 1)), "q"),
        (lambda c: c.search("   "), "q"),
        (lambda c: c.search("x", min_relevance=1.5), "min_relevance"),
        (lambda c: c.search("x", types="book,novel"), "types"),
        (lambda c: c.get_random_highlights(count=contract.MAX_RANDOM_COUNT + 1), "count"),
        (lambda c: c.get_article("a", max_chars=contract.MIN_MAX_CHARS - 1), "max_chars"),
        (lambda c: c.get_article("a", offset=-1), "offset"),
        (lambda c: c.get_source("s", per_page=contract.MAX_PER_PAGE + 1), "per_page"),
        (lambda c: c.list_articles(sort_by="title"), "sort_by"),
        (lambda c: c.list_sources(type="novel"), "type"),
    ],
)
async def test_query_bounds_raise_invalid_parameter_without_a_request(
    mock_client: MockClientFactory, call: Any, field: str
) -> None:
    server = FaultServer([ONE])
    async with mock_client(server) as client:
        with pytest.raises(InvalidParameterError) as caught:
            await call(client)
    assert server.sent == []
    assert field in caught.value.fields
    assert caught.value.status == 400
    assert not caught.value.from_server


@pytest.mark.parametrize("method", ["list_highlights", "list_sources", "list_articles"])
async def test_a_misspelt_filter_is_a_type_error_without_a_request(
    mock_client: MockClientFactory, method: str
) -> None:
    # The filters are declared once (a TypedDict per list); a name not in it fails as an
    # unknown keyword argument always has, and is never sent as a query parameter.
    server = FaultServer([page_of([], 1, 1)])
    async with mock_client(server) as client:
        with pytest.raises(TypeError, match="favourite"):
            await getattr(client, method)(favourite=True)
    assert server.sent == []


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda c: c.create_highlight("x" * (contract.MAX_HIGHLIGHT_TEXT + 1)), "content"),
        (lambda c: c.create_highlight("x", note="n" * (contract.MAX_HIGHLIGHT_TEXT + 1)), "note"),
        (lambda c: c.create_highlight("x", location=-1), "location"),
        (lambda c: c.create_source("n" * (contract.MAX_SOURCE_NAME + 1), "book"), "name"),
        (lambda c: c.create_source("n", "book", isbn="1" * (contract.MAX_BOOK_CODE + 1)), "isbn"),
        (lambda c: c.create_source("n", "article"), "type"),
        (lambda c: c.update_source("s", name="n" * (contract.MAX_SOURCE_NAME + 1)), "name"),
        (lambda c: c.update_source("s", note="n" * (contract.MAX_NOTE + 1)), "note"),
        (lambda c: c.update_article("a", title="t" * (contract.MAX_ARTICLE_TITLE + 1)), "title"),
        (lambda c: c.update_article("a", home_status="trash"), "home_status"),
        (lambda c: c.create_tag("t" * (contract.MAX_TAG_NAME + 1)), "name"),
        (lambda c: c.add_highlight_tags("h", ["ok", ""]), "tags[1]"),
    ],
)
async def test_body_bounds_raise_validation_failed_without_a_request(
    mock_client: MockClientFactory, call: Any, field: str
) -> None:
    server = FaultServer([ONE])
    async with mock_client(server) as client:
        with pytest.raises(ValidationFailedError) as caught:
            await call(client)
    assert server.sent == []
    assert field in caught.value.fields
    assert caught.value.status == 422


async def test_bulk_names_the_bad_item_like_the_server_does(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([ONE])
    async with mock_client(server) as client:
        with pytest.raises(ValidationFailedError) as caught:
            await client.create_highlights_bulk([{"content": "ok"}, {"note": "no content"}])
    assert server.sent == []
    assert "highlights[1].content" in caught.value.fields


async def test_bulk_over_100_is_payload_too_large_without_a_request(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([ONE])
    async with mock_client(server) as client:
        with pytest.raises(PayloadTooLargeError) as caught:
            await client.create_highlights_bulk([NewHighlight(content=str(i)) for i in range(101)])
    assert server.sent == []
    assert caught.value.code == "payload_too_large"


async def test_bulk_sends_items_and_reads_the_created_list(mock_client: MockClientFactory) -> None:
    created = [{**HIGHLIGHT, "id": "h1"}, {**HIGHLIGHT, "id": "h2"}]
    server = FaultServer([json_reply(201, {"data": created})])
    async with mock_client(server) as client:
        result = await client.create_highlights_bulk(
            [NewHighlight(content="a", tags=["x"]), {"content": "b", "favorite": True}]
        )
    assert [h.id for h in result] == ["h1", "h2"]
    assert server.sent[0].body == {
        "highlights": [{"content": "a", "tags": ["x"]}, {"content": "b", "favorite": True}]
    }


# Pagination ------------------------------------------------------------------------------


async def test_iterate_walks_every_page_until_has_more_is_false(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer(
        [page_of(["a", "b"], 1, 3), page_of(["c", "d"], 2, 3), page_of(["e"], 3, 3)]
    )
    async with mock_client(server) as client:
        ids = [h.id async for h in client.iterate(client.list_highlights, max_items=None, tag="x")]
    assert ids == ["a", "b", "c", "d", "e"]
    assert [s.params["page"] for s in server.sent] == ["1", "2", "3"]
    assert {s.params["tag"] for s in server.sent} == {"x"}


async def test_iterate_stops_at_the_item_cap_without_fetching_more(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([page_of(["a", "b"], 1, 50), page_of(["c", "d"], 2, 50)])
    async with mock_client(server) as client:
        items: list[Highlight] = [
            h async for h in client.iterate(client.list_highlights, max_items=3, per_page=2)
        ]
    assert [h.id for h in items] == ["a", "b", "c"]
    assert server.count() == 2
    assert server.sent[0].params["per_page"] == "2"


async def test_iterate_skips_items_that_shifted_onto_the_next_page(
    mock_client: MockClientFactory,
) -> None:
    # A highlight created mid-walk pushes "b" from page 1 onto page 2.
    server = FaultServer([page_of(["a", "b"], 1, 2), page_of(["b", "c"], 2, 2)])
    async with mock_client(server) as client:
        ids = [h.id async for h in client.paginate(client.list_highlights)]
    assert ids == ["a", "b", "c"]


async def test_iterate_stops_on_an_empty_page_even_if_has_more_lies(
    mock_client: MockClientFactory,
) -> None:
    lying = json_reply(
        200,
        {
            "data": [],
            "pagination": {
                "page": 2,
                "per_page": 2,
                "total": 9,
                "total_pages": 0,
                "has_more": True,
            },
        },
    )
    server = FaultServer([page_of(["a"], 1, 5), lying])
    async with mock_client(server) as client:
        ids = [h.id async for h in client.iterate(client.search, q="x", max_items=None)]
    assert ids == ["a"]
    assert server.count() == 2


async def test_saving_a_social_post_reports_the_highlight_it_became(
    mock_client: MockClientFactory,
) -> None:
    answer = {"data": {"id": "h9", "kind": "highlight", "source_id": "s9", "duplicate": False}}
    server = FaultServer([json_reply(201, answer)])
    async with mock_client(server) as client:
        saved = await client.save_article("https://bsky.app/profile/a.bsky.social/post/3k")
    assert (saved.kind, saved.id, saved.source_id) == ("highlight", "h9", "s9")
    assert server.sent[0].body == {"url": "https://bsky.app/profile/a.bsky.social/post/3k"}
