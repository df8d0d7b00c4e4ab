"""MCP Inspector's CLI (`mcp-inspector --cli`, pinned in e2e/package.json) drives the
scenario, one CLI call per step as a script or a person at a terminal would, through host
config files: URL entries over streamable HTTP, and Claude Desktop's stdio config.

Over stdio each CLI call starts a server process of its own (about 2.5 CPU-s each), so there
the Inspector makes the calls that only it can check: both config entries start and answer,
and a tool error is its exit code 5. The scenario's other steps over that same stdio config
are the TypeScript SDK's and pydantic-ai's (test_e2e_typescript_sdk.py[stdio],
test_e2e_pydantic_ai.py), and the Inspector's over HTTP below."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import (
    ARTICLE_ID,
    ID,
    INSPECTOR_BIN,
    NEXT_OFFSET,
    NODE,
    SEARCH_QUERY,
    TOOL_NAMES,
    Library,
    article_url,
    check_saved,
    check_scenario,
    first_match,
    highlight_tags,
    quiet_env,
    require,
    run,
)

pytestmark = pytest.mark.e2e

TOOL_ERROR_EXIT = 5  # the Inspector CLI's exit code when a tool answers isError


class Inspector:
    def __init__(self, config: Path, home: Path) -> None:
        self.config = config
        self.env = quiet_env(home)

    def request(self, server: str, *method: str, expect_exit: int = 0) -> dict[str, Any]:
        done = run(
            [
                require(NODE),
                require(INSPECTOR_BIN),
                "--cli",
                "--config",
                self.config,
                "--server",
                server,
                "--format",
                "json",
                "--quiet",
                # Its default, 30 s to connect, is what a stdio server's start took on a
                # machine loaded 19 deep (eight sessions on two cores): the call failed there.
                "--connect-timeout",
                "120000",
                *method,
            ],
            env=self.env,
        )
        assert done.returncode == expect_exit, (
            f"inspector {' '.join(method)} exited {done.returncode}, expected {expect_exit}\n"
            f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}"
        )
        payload: dict[str, Any] = json.loads(done.stdout)["result"]
        return payload

    def call(
        self, server: str, tool: str, arguments: dict[str, Any], expect_exit: int = 0
    ) -> dict[str, Any]:
        result = self.request(
            server,
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            json.dumps(arguments),
            expect_exit=expect_exit,
        )
        text = "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
        return {"isError": result.get("isError", False), "text": text}


def test_inspector_cli_runs_the_scenario(
    library: Library, site: str, http_config: Path, client_home: Path
) -> None:
    transport = "streamable-http"
    inspector = Inspector(http_config, client_home)
    tag = f"e2e-inspector-{transport}"
    report: dict[str, Any] = {}

    listed = inspector.request("screvi", "--method", "tools/list")
    report["tools"] = [tool["name"] for tool in listed["tools"]]

    report["search"] = inspector.call("screvi", "search_highlights", {"query": SEARCH_QUERY})
    report["highlight_id"] = first_match(ID, report["search"]["text"], "highlight id")

    report["save"] = inspector.call(
        "screvi",
        "save_article",
        {"url": article_url(site, f"inspector-{transport}"), "wait": True, "wait_seconds": 30},
    )
    check_saved(report["save"])
    article_id = first_match(ARTICLE_ID, report["save"]["text"], "article id")
    report["chunk1"] = inspector.call("screvi", "read_article", {"article_id": article_id})
    offset = int(first_match(NEXT_OFFSET, report["chunk1"]["text"], "next offset"))
    report["chunk2"] = inspector.call(
        "screvi", "read_article", {"article_id": article_id, "offset": offset}
    )

    report["tag"] = inspector.call(
        "screvi", "add_highlight_tags", {"highlight_id": report["highlight_id"], "tags": [tag]}
    )

    skill = inspector.request("screvi", "--method", "resources/read", "--uri", "screvi://skill.md")
    report["skill"] = skill["contents"][0]["text"]

    report["error"] = inspector.call(
        "screvi-readonly",
        "create_highlight",
        {"content": "Written through a read-only key: this must be refused."},
        expect_exit=TOOL_ERROR_EXIT,
    )

    check_scenario(report, tag=tag)
    assert tag in highlight_tags(library.api_url, library.write_key, report["highlight_id"])


def test_inspector_cli_starts_both_stdio_servers_of_the_desktop_config(
    stdio_config: Path, client_home: Path
) -> None:
    inspector = Inspector(stdio_config, client_home)
    listed = inspector.request("screvi", "--method", "tools/list")
    assert {tool["name"] for tool in listed["tools"]} == TOOL_NAMES
    error = inspector.call(
        "screvi-readonly",
        "create_highlight",
        {"content": "Written through a read-only key: this must be refused."},
        expect_exit=TOOL_ERROR_EXIT,
    )
    assert error["isError"] and error["text"].startswith("[insufficient_scope]"), error["text"]
