"""Text with nothing to read is refused: a highlight's content (and a source's name) must hold
a visible character, and a tag name may hold no control character (NUL, tab, newline...),
no bidi override or isolate, no line separator: each would be echoed raw into every listing
an agent or a terminal shows. The same rule holds on create, update, bulk, tag endpoints
and imports, which share the library's input models."""

from __future__ import annotations

import pytest
from api_testkit import Api

from screvi_mcp.local.storage.store import imports

EMPTY_TEXTS = ["\x00", " \t\n", "\u200b\u202e\x7f", "\u2028\u3000"]
BAD_TAG_NAMES = ["a\x00b", "tab\there", "line\nbreak", "\u202eevil", "iso\u2066late", "a\u2029b"]


@pytest.mark.parametrize("content", EMPTY_TEXTS)
async def test_content_with_nothing_visible_is_refused(asgi_api: Api, content: str) -> None:
    response = await asgi_api.post("/highlights", {"content": content})
    assert response.status_code == 422, response.text
    answer = response.json()
    assert answer["code"] == "validation_failed"
    assert "visible" in answer["fields"]["content"]


async def test_update_and_bulk_refuse_it_too(asgi_api: Api) -> None:
    item = await asgi_api.highlight("fine")
    patched = await asgi_api.patch(f"/highlights/{item['id']}", {"content": "\x00"})
    assert patched.status_code == 422
    assert "visible" in patched.json()["fields"]["content"]
    bulk = await asgi_api.post(
        "/highlights/bulk", {"highlights": [{"content": "ok"}, {"content": " \x00 "}]}
    )
    assert bulk.status_code == 422
    assert "visible" in bulk.json()["fields"]["highlights[1].content"]
    assert asgi_api.scalar("SELECT count(*) FROM highlights") == 1


async def test_a_source_name_with_nothing_visible_is_refused(asgi_api: Api) -> None:
    response = await asgi_api.post("/sources", {"name": "\x00", "type": "book"})
    assert response.status_code == 422
    assert "visible" in response.json()["fields"]["name"]


@pytest.mark.parametrize("name", BAD_TAG_NAMES)
async def test_a_tag_name_with_control_or_bidi_characters_is_refused(
    asgi_api: Api, name: str
) -> None:
    item = await asgi_api.highlight("tagged")
    attempts = [
        ("POST", "/highlights", {"content": "x", "tags": ["fine", name]}, "tags[1]"),
        ("POST", f"/highlights/{item['id']}/tags", {"tags": [name]}, "tags[0]"),
        ("PATCH", f"/highlights/{item['id']}", {"tags": [name]}, "tags[0]"),
        ("POST", "/tags", {"name": name}, "name"),
    ]
    for method, path, body, field in attempts:
        response = await asgi_api.request(method, path, json=body)
        assert response.status_code == 422, (method, path, response.text)
        reason = response.json()["fields"][field]
        assert "control" in reason and "U+" in reason, reason
    assert asgi_api.scalar("SELECT count(*) FROM tags") == 0


async def test_renaming_a_tag_is_held_to_the_same_rule(asgi_api: Api) -> None:
    created = (await asgi_api.post("/tags", {"name": "plain"})).json()["data"]
    response = await asgi_api.patch(f"/tags/{created['id']}", {"name": "re\u202ename"})
    assert response.status_code == 422
    assert "U+202E" in response.json()["fields"]["name"]


async def test_emoji_and_joiners_in_tag_names_stay_allowed(asgi_api: Api) -> None:
    item = await asgi_api.highlight("dev", tags=["👩\u200d💻 coding", "naïve café"])
    assert sorted(tag["name"] for tag in item["tags"]) == ["naïve café", "👩\u200d💻 coding"]


def test_an_import_is_held_to_the_same_rule() -> None:
    with pytest.raises(imports.ImportRejected, match=r"content.*visible"):
        imports.validate_highlight({"content": "\x00"})
    with pytest.raises(imports.ImportRejected, match=r"tags\[0\].*U\+0000"):
        imports.validate_highlight({"content": "x", "tags": ["a\x00"]})
