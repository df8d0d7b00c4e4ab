"""The skill file: fetched from the API root without auth, else the bundled copy."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from client_testkit import FaultServer, MockClientFactory, error_reply

from screvi_mcp.client import (
    NotFoundError,
    ScreviClient,
    SkillFileUnavailable,
)
from screvi_mcp.client.skill import root_url

MARKDOWN = "# Screvi\n\nUse search before listing.\n"


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    path = tmp_path / "skills" / "screvi" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("# Bundled Screvi skill\n", encoding="utf-8")
    return path


def test_root_url_drops_the_api_version_path() -> None:
    assert root_url("https://api.screvi.com/api/v1") == "https://api.screvi.com"
    assert root_url("https://api.screvi.com/api/v1/") == "https://api.screvi.com"
    assert root_url("http://127.0.0.1:8123/api/v1") == "http://127.0.0.1:8123"
    assert root_url(ScreviClient.hosted("sk_live_x").base_url) == "https://api.screvi.com"


async def test_skill_file_comes_from_the_root_without_the_key(
    mock_client: MockClientFactory, bundled: Path
) -> None:
    server = FaultServer(
        [httpx.Response(200, text=MARKDOWN, headers={"content-type": "text/markdown"})]
    )
    async with mock_client(server, bundled_skill_path=bundled) as client:
        skill = await client.get_skill_file()
    assert (skill.content, skill.origin) == (MARKDOWN, "api")
    assert server.sent[0].path == "/.well-known/skills/default/skill.md"
    assert "x-api-key" not in server.sent[0].headers


@pytest.mark.parametrize(
    "failure",
    [
        error_reply(404, "not_found"),
        httpx.Response(503, text="<html>down</html>"),
        httpx.ConnectError("Connection refused"),
        httpx.ReadTimeout("slow"),
    ],
    ids=["404", "503-html", "refused", "timeout"],
)
async def test_unreachable_skill_file_falls_back_to_the_bundled_copy(
    mock_client: MockClientFactory, bundled: Path, failure: httpx.Response | Exception
) -> None:
    server = FaultServer([failure])
    async with mock_client(server, bundled_skill_path=bundled) as client:
        skill = await client.get_skill_file()
    assert skill.origin == "bundled"
    assert skill.content == "# Bundled Screvi skill\n"
    assert skill.location == str(bundled)
    assert server.count() == 1


async def test_without_fallback_the_api_error_is_raised(
    mock_client: MockClientFactory, bundled: Path
) -> None:
    server = FaultServer([error_reply(404, "not_found", "no skill file")])
    async with mock_client(server, bundled_skill_path=bundled) as client:
        with pytest.raises(NotFoundError):
            await client.get_skill_file(fallback=False)


async def test_no_copy_anywhere_is_reported(mock_client: MockClientFactory, tmp_path: Path) -> None:
    server = FaultServer([httpx.ConnectError("Connection refused")])
    async with mock_client(server, bundled_skill_path=tmp_path / "missing.md") as client:
        with pytest.raises(SkillFileUnavailable):
            await client.get_skill_file()
