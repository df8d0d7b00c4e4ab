"""What the MCP server tests share: calling tools and reading their errors, the seeded
library, the server in-process, the embedded API on a socket, and `screvi-mcp` subprocesses.

(A module of its own rather than `conftest`: several test folders have a conftest.py, and
`from conftest import ...` would find whichever was imported first.)
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from mcp import Client
from mcp.types import CallToolResult, TextContent

from screvi_mcp.server.app import all_tool_specs, build_server
from screvi_mcp.server.backend import Backend, BackendConfig
from screvi_mcp.server.toolkit import TOOLSETS, Toolset
from testsupport.polling import wait_until
from testsupport.servers import free_port

SCREVI_MCP = str(Path(sys.executable).parent / "screvi-mcp")
ARTICLE_TEXT_CHARS = 12000
# Loopback only: the fetcher refuses private addresses, and no test traffic leaves the host.
SAVE_URL = "http://127.0.0.1:9/an-article-to-save"


# Tool names ------------------------------------------------------------------------------
# Derived from the declared tools (never listed by hand), so a new tool needs no test edit.


def tool_names(*toolsets: Toolset, read_only: bool = False) -> frozenset[str]:
    """The tools a server offers with these toolsets (all when none are named)."""
    wanted = set(toolsets or TOOLSETS)
    return frozenset(
        spec.name
        for spec in all_tool_specs()
        if spec.toolset in wanted and not (read_only and spec.write)
    )


ALL_TOOLS = tool_names()
READ_TOOLS = tool_names(read_only=True)
WRITE_TOOLS = ALL_TOOLS - READ_TOOLS


# Results --------------------------------------------------------------------------------


def result_text(result: CallToolResult) -> str:
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    assert texts, f"no text content in {result!r}"
    return "\n".join(texts)


async def call_ok(client: Client, name: str, arguments: dict[str, Any] | None = None) -> str:
    result = await client.call_tool(name, arguments or {})
    text = result_text(result)
    assert not result.is_error, f"{name} failed: {text}"
    return text


async def call_error(client: Client, name: str, arguments: dict[str, Any] | None = None) -> str:
    result = await client.call_tool(name, arguments or {})
    text = result_text(result)
    assert result.is_error, f"{name} was expected to fail but answered: {text}"
    return text


def assert_tool_error(text: str, code: str, *mentions: str) -> None:
    """`[code] what happened. Next: what to do.`, naming what the agent must fix."""
    assert text.startswith(f"[{code}] "), f"expected [{code}], got: {text}"
    assert "Next:" in text, f"no 'Next:' hint in: {text}"
    for mention in mentions:
        assert mention in text, f"{mention!r} not named in: {text}"
    assert "Traceback" not in text


# The seeded library ------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    book_id: str
    book_highlight_id: str
    second_book_highlight_id: str
    note_highlight_id: str
    empty_source_id: str
    self_source_id: str
    tag_id: str
    other_tag_id: str
    article_id: str
    article_text: str


def article_body(chars: int = ARTICLE_TEXT_CHARS) -> str:
    paragraph = (
        "Attention is the currency of the reading mind; spend it on what compounds. " * 8
    ).strip()
    paragraphs: list[str] = []
    while sum(len(p) + 2 for p in paragraphs) < chars:
        paragraphs.append(f"{len(paragraphs) + 1}. {paragraph}")
    return "\n\n".join(paragraphs)[:chars]


def insert_article(
    library_path: Path,
    *,
    url: str,
    title: str,
    parse_state: str,
    text: str | None = None,
    html: str | None = None,
) -> str:
    """An article row written straight into SQLite, as the fetcher would leave it."""
    article_id = str(uuid.uuid4())
    now = "2025-01-15T10:00:00Z"
    conn = sqlite3.connect(library_path)
    try:
        with conn:
            conn.execute(
                "INSERT INTO sources(id, name, type, url, created_at, updated_at) "
                "VALUES (?, ?, 'article', ?, ?, ?)",
                (article_id, title, url, now, now),
            )
            conn.execute(
                "INSERT INTO articles(source_id, title, url, url_key, saved_at, parse_state, "
                "content_text, content_html, source_domain) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (article_id, title, url, url, now, parse_state, text, html, "127.0.0.1"),
            )
    finally:
        conn.close()
    return article_id


async def seed_library(path: Path) -> Seed:
    backend = Backend(BackendConfig(library_path=path))
    try:
        client = await backend.shared_client()
        book = await client.create_source(
            "Thinking, Fast and Slow", "book", author="Daniel Kahneman"
        )
        first = await client.create_highlight(
            "Nothing in life is as important as you think it is while you are thinking about it.",
            source_id=book.id,
            tags=["psychology"],
            location=10,
        )
        second = await client.create_highlight(
            "A reliable way to make people believe in falsehoods is frequent repetition.",
            source_id=book.id,
            location=20,
        )
        # The user's own personal-notes source, made before any standalone highlight (which
        # would otherwise create it, and make this create a 409).
        personal = await client.create_source("My notes", "self")
        note = await client.create_highlight(
            "Write tests for the tools agents actually call.", favorite=True, tags=["craft"]
        )
        empty = await client.create_source("An empty notebook", "custom")
        tags = {tag.name: tag.id for tag in await client.list_tags()}
        text = article_body()
        article_id = insert_article(
            path,
            url="http://127.0.0.1:9/attention",
            title="On attention",
            parse_state="parsed",
            text=text,
            html="".join(f"<p>{p}</p>" for p in text.split("\n\n")),
        )
    finally:
        await backend.aclose()
    return Seed(
        book_id=book.id,
        book_highlight_id=first.id,
        second_book_highlight_id=second.id,
        note_highlight_id=note.id,
        empty_source_id=empty.id,
        self_source_id=personal.id,
        tag_id=tags["psychology"],
        other_tag_id=tags["craft"],
        article_id=article_id,
        article_text=text,
    )


def copy_library(source: Path, target: Path) -> Path:
    """A consistent copy of a library file (WAL included), through SQLite's backup API."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target


@asynccontextmanager
async def mcp_client(
    config: BackendConfig | Path,
    *,
    read_only: bool = False,
    toolsets: Iterable[Toolset] = TOOLSETS,
    mode: str = "auto",
) -> AsyncIterator[Client]:
    """The SDK's in-process client of a server over `config` (a library path: embedded)."""
    if isinstance(config, Path):
        config = BackendConfig(library_path=config)
    backend = Backend(config)
    server = build_server(backend, read_only=read_only, toolsets=toolsets)
    try:
        # Started here, so that it is opened and closed by the same task.
        await backend.shared_client()
        async with Client(server, mode=mode, cache=None) as client:  # type: ignore[arg-type]
            yield client
    finally:
        await backend.aclose()


# The embedded API on a socket, for hosted mode ---------------------------------------------


@dataclass(frozen=True)
class LocalApi:
    base_url: str
    library_path: Path
    write_key: str
    read_key: str
    legacy_key: str


# Subprocesses ------------------------------------------------------------------------------


def server_env(**extra: str) -> dict[str, str]:
    """The environment of a subprocess: ours without any SCREVI_* setting, plus `extra`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SCREVI_") or key == "SCREVI_ENGLISH_MODEL"
    }
    env.update(extra)
    return env


class ServerProcess:
    """`screvi-mcp` on an HTTP transport, on a free loopback port.

    Starting does not wait, so several can start side by side; `wait_healthy()` polls
    `/health` (bounded); `close()` stops the process and is always called in teardown.
    """

    def __init__(
        self, args: Sequence[str], log_path: Path, env: dict[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            [SCREVI_MCP, *args, "--port", str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env or server_env(),
        )

    def wait_healthy(self) -> ServerProcess:
        def healthy() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"screvi-mcp exited early:\n{self.log()}")
            return httpx.get(f"{self.root}/health", timeout=1).status_code == 200

        wait_until(
            healthy,
            timeout=30,  # a bound for a loaded machine, not a timing check
            what=lambda: f"screvi-mcp did not answer /health:\n{self.log()}",
            transient=(httpx.TransportError,),
        )
        return self

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._log.close()
