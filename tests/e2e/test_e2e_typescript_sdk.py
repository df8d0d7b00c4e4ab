"""The official TypeScript SDK client (`@modelcontextprotocol/sdk`, pinned in
e2e/package.json) runs the scenario from e2e/sdk_client.mjs, over stdio from the Claude
Desktop config and over streamable HTTP from URL entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import (
    NODE,
    SDK_CLIENT,
    SEARCH_QUERY,
    Library,
    article_url,
    check_scenario,
    highlight_tags,
    quiet_env,
    require,
    run,
)

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_typescript_sdk_client_runs_the_scenario(
    transport: str,
    library: Library,
    site: str,
    stdio_config: Path,
    request: pytest.FixtureRequest,
    client_home: Path,
) -> None:
    config = stdio_config if transport == "stdio" else request.getfixturevalue("http_config")
    done = run(
        [
            require(NODE),
            require(SDK_CLIENT),
            config,
            "screvi",
            "screvi-readonly",
            article_url(site, f"sdk-{transport}"),
            SEARCH_QUERY,
        ],
        env=quiet_env(client_home),
    )
    assert done.returncode == 0, f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-4000:]}"
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["transport"] == ("stdio" if transport == "stdio" else "http")
    assert report["server"]["name"] == "screvi"
    [skill] = report["skill"]
    assert (skill["uri"], skill["mimeType"]) == ("screvi://skill.md", "text/markdown")
    report["skill"] = skill["text"]

    tag = f"e2e-sdk-{report['transport']}"
    check_scenario(report, tag=tag)
    assert tag in highlight_tags(library.api_url, library.write_key, report["highlight_id"])
