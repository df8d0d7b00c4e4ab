"""Requests the embedded library answers in process, without HTTP messages, answer exactly as
the same requests sent through its ASGI app do; the client takes that way when it can."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from client_testkit import Keys

from screvi_mcp.client import ScreviClient, ScreviError, UnexpectedResponseError
from screvi_mcp.client.in_process import json_body, query_string
from screvi_mcp.local.api.auth import SUBSCRIPTION_SETTING
from screvi_mcp.local.api.seam import EmbeddedLibrary
from screvi_mcp.local.storage.library import Library

BASE = "http://screvi.embedded/api/v1"
# These change from one request to the next, whichever way it is sent.
VOLATILE_HEADERS = {"x-ratelimit-remaining", "x-ratelimit-reset", "date", "content-length"}
VOLATILE_FIELDS = {"updated_at"}


def _pairs(key: str | None, body: bytes | None) -> list[tuple[str, str]]:
    pairs = [("accept", "application/json"), ("user-agent", "tests")]
    if key is not None:
        pairs.append(("x-api-key", key))
    if body is not None:
        pairs += [("content-length", str(len(body))), ("content-type", "application/json")]
    return pairs


async def _both_ways(
    library: EmbeddedLibrary,
    method: str,
    path: str,
    key: str | None,
    *,
    params: dict[str, str] | None = None,
    body: Any = None,
) -> tuple[tuple[int, dict[str, str], Any], tuple[int, dict[str, str], Any]]:
    """(status, stable headers, JSON body) in process, then through the ASGI app."""
    url = f"{BASE}/{path}"
    query = query_string(params)
    content = None if body is None else (body if isinstance(body, bytes) else json_body(body))
    pairs = _pairs(key, content)
    answer = await library.handle_in_process(method, url, query, pairs, content or b"")
    assert answer is not None, f"{method} {path} was not answered in process"
    status, raw, data = answer
    direct = (status, _stable(httpx.Headers(raw)), _steady(json.loads(data)))
    request = httpx.Request(
        method, f"{url}?{query}" if query else url, headers=pairs, content=content
    )
    response = await library.handle_async_request(request)
    await response.aread()
    through_app = (response.status_code, _stable(response.headers), _steady(response.json()))
    return direct, through_app


def _steady(body: Any) -> Any:
    """A JSON body without the fields a repeated write changes (its time)."""
    if isinstance(body, dict):
        return {k: _steady(v) for k, v in body.items() if k not in VOLATILE_FIELDS}
    if isinstance(body, list):
        return [_steady(item) for item in body]
    return body


def _stable(headers: httpx.Headers) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name not in VOLATILE_HEADERS}


@pytest.fixture
async def library(library_path: Path, keys: Keys) -> Any:
    async with EmbeddedLibrary(library_path, max_body_bytes=4096) as served:
        yield served


async def test_in_process_answers_match_the_app_answers(
    library: EmbeddedLibrary, library_path: Path, keys: Keys
) -> None:
    # Not closed here: closing a client closes its transport, the fixture's library.
    client = ScreviClient(**library.client_options(keys.write))
    created = await client.create_highlight("A line worth keeping", tags=["kept"])
    await client.create_highlight("Another line")
    cases: list[tuple[str, str, str | None, dict[str, Any]]] = [
        ("GET", f"highlights/{created.id}", keys.write, {"params": {"include_metadata": "true"}}),
        ("GET", "highlights", keys.read, {"params": {"per_page": "1", "tag": "kept"}}),
        ("GET", "highlights", keys.read, {"params": {"per_page": "0"}}),  # 400
        ("GET", "highlights/no-such-id", keys.write, {}),  # 404
        ("GET", "tags", None, {}),  # 401 missing key
        ("GET", "tags", "sk_live_unknown", {}),  # 401 unknown key
        ("GET", "tags", keys.legacy, {}),  # Deprecation header
        ("PATCH", f"highlights/{created.id}", keys.read, {"body": {"note": "x"}}),  # 403 scope
        ("PATCH", f"highlights/{created.id}", keys.write, {"body": {"note": "seen"}}),
        ("POST", f"highlights/{created.id}/tags", keys.write, {"body": b"{not json"}),  # 422
        ("POST", "tags", keys.write, {"body": {"name": "x" * 5000}}),  # 413 past 4096 bytes
    ]
    for method, path, key, options in cases:
        direct, through_app = await _both_ways(library, method, path, key, **options)
        assert direct == through_app, (method, path)
    statuses = [
        (await _both_ways(library, method, path, key, **options))[0][0]
        for method, path, key, options in cases
    ]
    assert statuses == [200, 200, 400, 404, 401, 401, 200, 403, 200, 422, 413]
    legacy = await _both_ways(library, "GET", "tags", keys.legacy)
    assert legacy[0][1].get("deprecation") == "true"

    # The account's settings are read per request in process too.
    opened = Library.open(library_path)
    try:
        opened.set_setting(SUBSCRIPTION_SETTING, "0")
    finally:
        opened.close()
    direct, through_app = await _both_ways(library, "GET", "tags", keys.legacy)
    assert direct == through_app
    assert direct[0] == 403 and direct[2]["code"] == "subscription_required"
    assert direct[1].get("deprecation") == "true"


async def test_requests_outside_the_api_pipeline_are_left_to_http(
    library: EmbeddedLibrary, keys: Keys
) -> None:
    pairs = _pairs(keys.write, None)
    for method, url in [
        ("PUT", f"{BASE}/highlights"),  # 405 with Allow, from the app's error handler
        ("GET", f"{BASE}/no-such-endpoint"),  # 404 from routing
        ("GET", "http://screvi.embedded/skill.md"),  # not a pipeline endpoint
        ("GET", f"{BASE}/highlights/../tags"),  # dot segments: httpx normalizes them
        ("HEAD", f"{BASE}/tags"),
        ("GET", f"{BASE}/highlights/ünquoted"),  # not a URL httpx would send as is
    ]:
        assert await library.handle_in_process(method, url, "", pairs, b"") is None, url


class CountingLibrary(EmbeddedLibrary):
    """Counts the requests that went through the ASGI app rather than in process."""

    through_app = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.through_app += 1
        return await super().handle_async_request(request)


async def test_the_client_answers_in_process_and_falls_back_to_http(
    library_path: Path, keys: Keys
) -> None:
    async with CountingLibrary(library_path) as library:
        client = ScreviClient(**library.client_options())
        created = await client.create_highlight("In process", tags=["quick"])
        fetched = await client.get_highlight(created.id, include_metadata=True)
        listed = await client.list_highlights(tag="quick")
        assert fetched.content == "In process" and [h.id for h in listed.data] == [created.id]
        assert library.through_app == 0
        # A borrowed transport (a caller's own key) answers in process as well.
        async with client.with_api_key(keys.read) as borrowed:
            assert (await borrowed.get_highlight(created.id)).id == created.id
        assert library.through_app == 0
        # Dot segments are left to httpx, which normalizes them away (here: to the API root,
        # which is no endpoint), so the answer is whatever the app says to that. (No id
        # method sends them: an id `..` is a malformed id, answered without a request.)
        with pytest.raises(ScreviError):
            await client._get("highlights/..")
        assert library.through_app == 1
        await client.aclose()


async def test_an_oversized_in_process_answer_is_refused_with_what_was_asked(
    library_path: Path,
) -> None:
    async with EmbeddedLibrary(library_path) as library:
        created = await ScreviClient(**library.client_options()).create_highlight("x" * 500)
        small = ScreviClient(**{**library.client_options(), "max_response_bytes": 200})
        with pytest.raises(UnexpectedResponseError) as raised:
            await small.get_highlight(created.id)
        error = raised.value
        assert error.method == "GET" and error.path == f"highlights/{created.id}"
        assert "larger than the client's limit of 200 bytes" in str(error)
