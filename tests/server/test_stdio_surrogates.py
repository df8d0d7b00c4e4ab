"""A tool call whose JSON holds a lone UTF-16 surrogate (`"\\ud800"`: valid JSON text, not
Unicode) over stdio: the SDK cannot parse it, and used to drop it without an answer, so the
agent waited until its own timeout. It gets an error naming the problem; nothing is written
and the server keeps serving."""

from __future__ import annotations

import inspect
import json
import select
import subprocess
from pathlib import Path

import pytest
from mcp.server import MCPServer
from mcp.server.lowlevel import Server
from server_testkit import SCREVI_MCP, server_env

from screvi_mcp.server.transport import lowlevel_server

# Each read waits at most this long for the server's line.
ANSWER_SECONDS = 30.0


# (tool, arguments as sent, what the error says): a lone trailing or leading surrogate, and
# two leading ones.
REFUSED = [
    ("create_tag", '{"name": "broken \\udfff tag"}', "surrogate"),
    ("create_highlight", '{"content": "broken \\ud800 text"}', "surrogate"),
    ("search_highlights", '{"query": "broken \\ud83d\\ud83d"}', "surrogate"),
]


def _line(process: subprocess.Popen[bytes]) -> dict[str, object]:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], ANSWER_SECONDS)
    assert ready, "the server did not answer"
    answer: dict[str, object] = json.loads(process.stdout.readline())
    return answer


def _send(process: subprocess.Popen[bytes], text: str) -> None:
    assert process.stdin is not None
    process.stdin.write(text.encode() + b"\n")
    process.stdin.flush()


def _call(request_id: int, tool: str, arguments: str) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments}}}}}'
    )


def test_a_lone_surrogate_is_answered_not_dropped(library_path: Path, tmp_path: Path) -> None:
    with (tmp_path / "stderr.log").open("w") as errlog:
        process = subprocess.Popen(
            [SCREVI_MCP, "--library", str(library_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=server_env(),
        )
        try:
            hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
            hello["clientInfo"] = {"name": "raw", "version": "0"}
            _send(
                process,
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}),
            )
            assert "result" in _line(process)
            _send(process, '{"jsonrpc":"2.0","method":"notifications/initialized"}')
            for request_id, (tool, arguments, says) in enumerate(REFUSED, start=2):
                _send(process, _call(request_id, tool, arguments))
                answer = _line(process)
                assert answer["id"] == request_id and "error" in answer, answer
                assert says in str(answer["error"]["message"])  # type: ignore[index]
            _send(process, _call(99, "list_tags", "{}"))
            tags = json.dumps(_line(process))
            assert '"id": 99' in tags and "broken" not in tags
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_the_sdk_still_has_what_the_guard_wraps() -> None:
    """The guard reaches the SDK's private `MCPServer._lowlevel_server` (mcp 2.x has no public
    way to wrap the stdio read stream) and runs it as `run_stdio_async` does. An SDK that
    moves either fails here, naming what to adapt, not at a user's first stdio call."""
    server = lowlevel_server(MCPServer("probe"))
    assert isinstance(server, Server)
    run = list(inspect.signature(server.run).parameters)
    assert run[:3] == ["read_stream", "write_stream", "initialization_options"], run
    assert callable(server.create_initialization_options)
    # What transport._run_stdio copies, around the guard: if this changes, copy it again.
    copied = inspect.getsource(MCPServer.run_stdio_async)
    for step in ("stdio_server()", "_lowlevel_server.run(", "create_initialization_options()"):
        assert step in copied, f"MCPServer.run_stdio_async changed: {copied}"
    with pytest.raises(RuntimeError, match="_lowlevel_server"):
        lowlevel_server(object())  # type: ignore[arg-type]
