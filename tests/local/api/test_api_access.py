"""Authentication, scopes, legacy keys, subscription, rate limit, error bodies, skill file,
and concurrent writers."""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from api_testkit import Api, OpenApi
from starlette.routing import Mount, Route

from screvi_mcp.extensions import ARTICLE_SEARCH_PATH
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.api.auth import SUBSCRIPTION_SETTING
from screvi_mcp.local.storage.library import Library
from screvi_mcp.skillfile import bundled_skill_path

ANY_ID = str(uuid.uuid4())
# The query a read cannot be answered without (a made-up id fills every path parameter).
REQUIRED_QUERY = {"/search": "?q=x", f"/{ARTICLE_SEARCH_PATH}": "?q=x"}


def _api_routes() -> list[Route]:
    """Every route of the API, as the app serves it (never opened: no file is touched)."""
    app = create_app(Path("never-opened.sqlite3"))
    (api,) = [route for route in app.routes if isinstance(route, Mount)]
    return [route for route in api.routes if isinstance(route, Route)]


# Every read endpoint, from the app itself: a new one is covered here without a line.
READS = [
    ("GET", re.sub(r"\{\w+\}", ANY_ID, route.path) + REQUIRED_QUERY.get(route.path, ""))
    for route in _api_routes()
    if "GET" in (route.methods or ())
]
WRITES = [
    ("POST", "/highlights", {"content": "x"}),
    ("POST", "/highlights/bulk", {"highlights": [{"content": "x"}]}),
    ("PATCH", f"/highlights/{ANY_ID}", {"note": "x"}),
    ("DELETE", f"/highlights/{ANY_ID}", None),
    ("POST", f"/highlights/{ANY_ID}/tags", {"tags": ["x"]}),
    ("DELETE", f"/highlights/{ANY_ID}/tags", {"tags": ["x"]}),
    ("POST", "/sources", {"name": "x", "type": "book"}),
    ("PATCH", f"/sources/{ANY_ID}", {"name": "x"}),
    ("DELETE", f"/sources/{ANY_ID}", None),
    ("POST", "/articles", {"url": "http://127.0.0.1:9/x"}),
    ("PATCH", f"/articles/{ANY_ID}", {"favorite": True}),
    ("POST", f"/articles/{ANY_ID}/tags", {"tags": ["x"]}),
    ("DELETE", f"/articles/{ANY_ID}/tags", {"tags": ["x"]}),
    ("POST", "/tags", {"name": "x"}),
    ("PATCH", f"/tags/{ANY_ID}", {"name": "x"}),
    ("DELETE", f"/tags/{ANY_ID}", None),
]
EVERY = [(method, path, None) for method, path in READS] + WRITES


def test_every_write_route_is_exercised() -> None:
    """Writes need a body, so they are listed by hand; this keeps the list whole."""
    written = {
        (method, re.sub(r"\{\w+\}", ANY_ID, route.path))
        for route in _api_routes()
        for method in route.methods or ()
        if method not in ("GET", "HEAD")
    }
    assert written == {(method, path) for method, path, _ in WRITES}


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert isinstance(body["error"], str) and body["error"]
    assert set(body) <= {"error", "code", "fields", "source_id"}
    return body


def count_rows(api: Api) -> int:
    return int(
        api.scalar(
            "SELECT (SELECT count(*) FROM highlights) + (SELECT count(*) FROM sources) "
            "+ (SELECT count(*) FROM tags)"
        )
    )


# --- keys ---------------------------------------------------------------------------------


async def test_every_endpoint_needs_a_key(asgi_api: Api) -> None:
    for method, path, body in EVERY:
        missing = await asgi_api.request(method, path, key=None, json=body)
        assert_error(missing, 401, "missing_api_key")
        unknown = await asgi_api.request(method, path, key="sk_live_not-a-real-key", json=body)
        assert_error(unknown, 401, "invalid_api_key")
    assert count_rows(asgi_api) == 0


async def test_key_in_either_header(api: Api) -> None:
    await api.highlight("x")
    for headers in (
        {"X-API-Key": api.keys.ro},
        {"Authorization": f"Bearer {api.keys.ro}"},
        {"Authorization": f"bearer {api.keys.ro}"},
    ):
        response = await api.get("/highlights", key=None, headers=headers)
        assert response.status_code == 200, headers
        assert len(response.json()["data"]) == 1
    basic = await api.get(
        "/highlights", key=None, headers={"Authorization": f"Basic {api.keys.ro}"}
    )
    assert_error(basic, 401, "missing_api_key")
    empty = await api.get("/highlights", key=None, headers={"X-API-Key": ""})
    assert_error(empty, 401, "missing_api_key")
    wrong_bearer = await api.get(
        "/highlights", key=None, headers={"Authorization": "Bearer sk_live_wrong"}
    )
    assert_error(wrong_bearer, 401, "invalid_api_key")


async def test_revoked_key_is_invalid(asgi_api: Api) -> None:
    response = await asgi_api.get("/highlights", key=asgi_api.keys.revoked)
    body = assert_error(response, 401, "invalid_api_key")
    assert asgi_api.keys.revoked not in response.text and "key_hash" not in str(body)


async def test_revoking_takes_effect_at_once(asgi_api: Api) -> None:
    from screvi_mcp.local.api import keys

    assert (await asgi_api.get("/tags", key=asgi_api.keys.ro)).status_code == 200
    assert keys.revoke_key(asgi_api.library, asgi_api.keys.ro_id)
    assert_error(await asgi_api.get("/tags", key=asgi_api.keys.ro), 401, "invalid_api_key")


async def test_read_only_key_reads_but_cannot_write(asgi_api: Api) -> None:
    for method, path in READS:
        response = await asgi_api.request(method, path, key=asgi_api.keys.ro)
        assert response.status_code in (200, 404), (method, path)  # 404: made-up ids
        if response.status_code == 404:
            assert response.json()["code"] == "not_found"
    for method, path, body in WRITES:
        response = await asgi_api.request(method, path, key=asgi_api.keys.ro, json=body)
        assert_error(response, 403, "insufficient_scope")
        assert "Deprecation" not in response.headers
    assert count_rows(asgi_api) == 0


async def test_scope_is_checked_before_the_body(asgi_api: Api) -> None:
    response = await asgi_api.request(
        "POST",
        "/highlights",
        key=asgi_api.keys.ro,
        content=b"{broken",
        headers={"Content-Type": "application/json"},
    )
    assert_error(response, 403, "insufficient_scope")


async def test_legacy_key_reads_with_deprecation_header(api: Api) -> None:
    item = await api.highlight("x")
    response = await api.get("/highlights", key=api.keys.legacy)
    assert response.status_code == 200
    assert len(response.json()["data"]) == 1
    assert "Deprecation" in response.headers
    one = await api.get(f"/highlights/{item['id']}", key=api.keys.legacy)
    assert one.status_code == 200 and "Deprecation" in one.headers
    missing = await api.get(f"/highlights/{uuid.uuid4()}", key=api.keys.legacy)
    assert_error(missing, 404, "not_found")
    assert "Deprecation" in missing.headers
    bad_param = await api.get("/highlights", key=api.keys.legacy, params={"per_page": "x"})
    assert_error(bad_param, 400, "invalid_parameter")
    assert "Deprecation" in bad_param.headers
    # Scoped keys never get it.
    assert "Deprecation" not in (await api.get("/highlights")).headers


async def test_legacy_key_cannot_write(asgi_api: Api) -> None:
    for method, path, body in WRITES:
        response = await asgi_api.request(method, path, key=asgi_api.keys.legacy, json=body)
        assert_error(response, 403, "legacy_key_read_only")
        assert "Deprecation" in response.headers, (method, path)
    assert count_rows(asgi_api) == 0


async def test_subscription_required(api: Api) -> None:
    api.library.set_setting(SUBSCRIPTION_SETTING, "0")
    for key in (api.keys.rw, api.keys.ro, api.keys.legacy):
        assert_error(await api.get("/highlights", key=key), 403, "subscription_required")
    assert_error(await api.post("/highlights", {"content": "x"}), 403, "subscription_required")
    assert api.scalar("SELECT count(*) FROM highlights") == 0
    # Authentication still comes first.
    assert_error(await api.get("/highlights", key=None), 401, "missing_api_key")
    assert_error(await api.get("/highlights", key="nope"), 401, "invalid_api_key")
    # The skill file needs no subscription either.
    assert (await api.get("/skill.md", key=None)).status_code in (200, 404)
    api.library.set_setting(SUBSCRIPTION_SETTING, "1")
    assert (await api.get("/highlights")).status_code == 200


# --- rate limit ---------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["asgi", "socket"])
async def test_rate_limit(open_api: OpenApi, transport: str) -> None:
    async with open_api(transport, rate_limit_per_minute=3) as api:
        remaining = []
        for _ in range(3):
            response = await api.get("/tags")
            assert response.status_code == 200, _
            assert response.headers["X-RateLimit-Limit"] == "3"
            remaining.append(int(response.headers["X-RateLimit-Remaining"]))
            assert int(response.headers["X-RateLimit-Reset"]) > 0
            assert "Retry-After" not in response.headers
        assert remaining == [2, 1, 0]
        limited = await api.get("/tags")
        assert_error(limited, 429, "rate_limited")
        assert 1 <= int(limited.headers["Retry-After"]) <= 60
        assert limited.headers["X-RateLimit-Limit"] == "3"
        assert limited.headers["X-RateLimit-Remaining"] == "0"
        assert int(limited.headers["X-RateLimit-Reset"]) > 0
        # A refused write is not performed.
        assert_error(await api.post("/tags", {"name": "late"}), 429, "rate_limited")
        assert api.scalar("SELECT count(*) FROM tags") == 0
        # Per key: another key has its own budget.
        assert (await api.get("/tags", key=api.keys.ro)).status_code == 200
        # Requests without a valid key are answered 401, not 429.
        assert_error(await api.get("/tags", key=None), 401, "missing_api_key")
        # The skill file is outside the limit.
        assert (await api.get("/skill.md", key=None)).status_code in (200, 404)


async def test_bulk_counts_as_one_request(open_api: OpenApi) -> None:
    async with open_api("asgi", rate_limit_per_minute=3) as api:
        bulk = await api.post(
            "/highlights/bulk", {"highlights": [{"content": f"h{i}"} for i in range(100)]}
        )
        assert bulk.status_code == 201
        assert bulk.headers["X-RateLimit-Remaining"] == "2"
        assert (await api.get("/highlights")).status_code == 200
        assert (await api.get("/highlights")).status_code == 200
        assert_error(await api.get("/highlights"), 429, "rate_limited")


async def test_default_limit_is_100_per_minute(asgi_api: Api) -> None:
    for _ in range(100):
        response = await asgi_api.get("/tags")
        assert response.status_code == 200, _
    assert response.headers["X-RateLimit-Limit"] == "100"
    assert response.headers["X-RateLimit-Remaining"] == "0"
    assert_error(await asgi_api.get("/tags"), 429, "rate_limited")


async def test_limit_from_the_library_setting(open_api: OpenApi, library_path: Path) -> None:
    from screvi_mcp.local.api.app import RATE_LIMIT_SETTING

    library = Library.open(library_path)
    library.set_setting(RATE_LIMIT_SETTING, "2")
    library.close()
    async with open_api("asgi") as api:
        assert (await api.get("/tags")).headers["X-RateLimit-Limit"] == "2"
        assert (await api.get("/tags")).status_code == 200
        assert_error(await api.get("/tags"), 429, "rate_limited")


async def test_legacy_key_keeps_deprecation_when_limited(open_api: OpenApi) -> None:
    async with open_api("asgi", rate_limit_per_minute=1) as api:
        assert (await api.get("/tags", key=api.keys.legacy)).status_code == 200
        limited = await api.get("/tags", key=api.keys.legacy)
        assert_error(limited, 429, "rate_limited")
        assert "Deprecation" in limited.headers


# --- error bodies -------------------------------------------------------------------------


async def test_internal_errors_hide_the_traceback(
    api: Api, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from screvi_mcp.local.storage.store import tags

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internal detail /etc/passwd")

    monkeypatch.setattr(tags, "list_all", explode)
    response = await api.get("/tags")
    body = assert_error(response, 500, "internal_error")
    assert set(body) == {"error", "code"}
    for leak in ("Traceback", "secret internal detail", "RuntimeError", 'File "', api.keys.rw):
        assert leak not in response.text


async def test_unknown_endpoint_and_method_are_json_errors(api: Api) -> None:
    unknown = await api.get("/nothing-here")
    assert_error(unknown, 404, "not_found")
    wrong_method = await api.request("PUT", "/highlights", json={})
    assert wrong_method.status_code == 405
    assert set(wrong_method.json()) == {"error", "code"}


async def test_validation_errors_name_fields_without_internals(asgi_api: Api) -> None:
    response = await asgi_api.post("/highlights", {"content": "x", "location": "far"})
    body = assert_error(response, 422, "validation_failed")
    assert set(body["fields"]) == {"location"}
    assert all(isinstance(v, str) and v for v in body["fields"].values())
    assert "pydantic" not in response.text.lower()
    assert "errors.pydantic.dev" not in response.text


# --- skill file ---------------------------------------------------------------------------


async def test_skill_file_without_auth(api: Api) -> None:
    bundled = bundled_skill_path()
    assert bundled is not None, "the repository ships skills/screvi/SKILL.md"
    expected = bundled.read_text(encoding="utf-8")
    for path in ("/.well-known/skills/default/skill.md", "/skill.md"):
        response = await api.get(path, key=None)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith("text/markdown")
        assert response.text == expected
    # A bad key does not matter either.
    assert (await api.get("/skill.md", key="garbage")).status_code == 200


async def test_given_skill_file_is_served(open_api: OpenApi, tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Custom skill\n\nUse the API wisely. ✓\n", encoding="utf-8")
    async with open_api("asgi", skill_path=skill) as api:
        response = await api.get("/skill.md", key=None)
        assert response.text == "# Custom skill\n\nUse the API wisely. ✓\n"


@pytest.mark.parametrize("transport", ["asgi", "socket"])
async def test_missing_skill_file_is_a_404_error(
    open_api: OpenApi, tmp_path: Path, transport: str
) -> None:
    async with open_api(transport, skill_path=tmp_path / "absent.md") as api:
        for path in ("/.well-known/skills/default/skill.md", "/skill.md"):
            assert_error(await api.get(path, key=None), 404, "not_found")


# --- concurrency --------------------------------------------------------------------------


async def test_concurrent_writes_all_land(open_api: OpenApi) -> None:
    async with open_api("socket") as api:
        responses = await asyncio.gather(
            *(
                api.post("/highlights", {"content": f"concurrent {i}", "tags": ["Shared"]})
                for i in range(50)
            )
        )
        assert [r.status_code for r in responses] == [201] * 50
        made = {r.json()["data"]["id"] for r in responses}
        assert len(made) == 50
        listed = await api.get("/highlights", params={"per_page": 100})
        assert {h["id"] for h in listed.json()["data"]} == made
        # Fifty writers creating the same new tag made exactly one.
        tags = (await api.get("/tags")).json()["data"]
        assert [(t["name"], t["highlight_count"]) for t in tags] == [("Shared", 50)]


async def test_a_405_names_the_methods_the_path_allows(api: Api) -> None:
    for method, path, allowed in [
        ("PUT", "/highlights", {"GET", "POST"}),
        ("POST", "/highlights/00000000-0000-4000-8000-000000000000", {"GET", "PATCH", "DELETE"}),
        ("PATCH", "/tags", {"GET", "POST"}),
        ("PUT", "/search", {"GET"}),
    ]:
        response = await api.request(method, path, json={})
        assert response.status_code == 405, (method, path)
        named = {m.strip() for m in response.headers["allow"].split(",")} - {"HEAD"}
        assert named == allowed, (method, path, response.headers["allow"])


async def test_a_lower_case_bearer_scheme_is_accepted(api: Api) -> None:
    for scheme in ("Bearer", "bearer", "BEARER"):
        response = await api.get(
            "/tags", key=None, headers={"Authorization": f"{scheme} {api.keys.rw}"}
        )
        assert response.status_code == 200, scheme
