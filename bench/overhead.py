"""Section 2: what a `get_highlight` costs at each layer, p50 and p99.

From the inside out:
- `local_service`: the embedded library's store function (`store.highlights.get`), the work
  any layer above must do at least once;
- `client`: `embedded_client(...).get_highlight`, answered in process by the library's
  API endpoint (auth, rate limit, JSON both ways, pydantic validation; no HTTP messages);
- `mcp_in_process`: the `get_highlight` tool through the SDK's in-process client;
- `mcp_stdio`: the same tool over stdio, `screvi-mcp --library PATH` as a subprocess.

The minimal server's `echo` tool, in-process and over stdio, shows what the SDK alone costs.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from bench.common import BENCH_DIR, PYTHON, SCREVI_MCP, Settings, clean_env, log, ratio, summary_ms

IN_PROCESS_ROUNDS = 4


async def _timed(call: Callable[[], Awaitable[Any]], iterations: int) -> list[float]:
    for _ in range(min(20, iterations)):  # warm-up: first-use costs are cold start's business
        await call()
    samples = []
    for _ in range(iterations):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


def _local_service(path: Path, ids: list[str], iterations: int) -> list[float]:
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights

    library = Library.open(path)
    try:
        conn = library.connection()
        cycle = itertools.cycle(ids)
        for _ in range(20):
            highlights.get(conn, next(cycle), include_metadata=True)
        samples = []
        for _ in range(iterations):
            started = time.perf_counter()
            highlights.get(conn, next(cycle), include_metadata=True)
            samples.append(time.perf_counter() - started)
        return samples
    finally:
        library.close()


async def _client(path: Path, ids: list[str], iterations: int) -> list[float]:
    from screvi_mcp.embedded import embedded_client

    cycle = itertools.cycle(ids)
    async with await embedded_client(path) as client:
        return await _timed(
            lambda: client.get_highlight(next(cycle), include_metadata=True), iterations
        )


async def _mcp_calls(
    client: Any, tool: str, arguments: Callable[[], dict[str, Any]], iterations: int
) -> list[float]:
    async def call() -> None:
        result = await client.call_tool(tool, arguments())
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {result.content}")

    return await _timed(call, iterations)


async def _mcp_in_process(
    path: Path, ids: list[str], iterations: int, no_wait: bool = True
) -> list[float]:
    from mcp import Client

    from screvi_mcp.local.api import request_pipeline as http
    from screvi_mcp.server.app import build_server
    from screvi_mcp.server.backend import Backend, BackendConfig

    backend = Backend(BackendConfig(library_path=path))
    server = build_server(backend)
    cycle = itertools.cycle(ids)
    http.NO_WAIT_READS = no_wait
    try:
        async with Client(server, cache=None) as client:  # type: ignore[arg-type]
            return await _mcp_calls(
                client, "get_highlight", lambda: {"highlight_id": next(cycle)}, iterations
            )
    finally:
        http.NO_WAIT_READS = True
        await backend.aclose()


async def _mcp_stdio(
    command: list[str], tool: str, arguments: Callable[[], dict[str, Any]], iterations: int
) -> list[float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=command[0], args=command[1:], env=clean_env())
    async with Client(params, cache=None) as client:
        return await _mcp_calls(client, tool, arguments, iterations)


async def _minimal_in_process(iterations: int) -> list[float]:
    import importlib.util

    from mcp import Client

    spec = importlib.util.spec_from_file_location("minimal_server", BENCH_DIR / "minimal_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    async with Client(module.mcp, cache=None) as client:
        return await _mcp_calls(client, "echo", lambda: {"text": "hello"}, iterations)


def run(settings: Settings, path: Path, ids: list[str]) -> dict[str, Any]:
    n, n_stdio = settings.call_iterations, settings.stdio_call_iterations
    cycle = itertools.cycle(ids)
    samples: dict[str, list[float]] = {}
    samples["local_service"] = _local_service(path, ids, n)
    log("tool-call overhead: client")
    samples["client"] = anyio.run(_client, path, ids, n)
    # The in-process pair (get_highlight, bare echo) takes turns in rounds, so that a change
    # in the machine's load hits both alike; their samples are pooled per side.
    rounds = 1 if settings.tiny else IN_PROCESS_ROUNDS
    # A third side: the same tool with its read sent through a worker thread, as before
    # issue 17 (what answering `get_highlight` on the event loop saves).
    samples["mcp_in_process"], samples["minimal_echo_in_process"] = [], []
    samples["mcp_in_process_thread_hop"] = []
    for round_number in range(rounds):
        log(f"tool-call overhead: MCP in-process vs echo, round {round_number + 1}")
        samples["mcp_in_process"] += anyio.run(_mcp_in_process, path, ids, n // rounds)
        samples["minimal_echo_in_process"] += anyio.run(_minimal_in_process, n // rounds)
        samples["mcp_in_process_thread_hop"] += anyio.run(
            _mcp_in_process, path, ids, n // rounds, False
        )
    log("tool-call overhead: MCP over stdio")
    samples["mcp_stdio"] = anyio.run(
        _mcp_stdio,
        [SCREVI_MCP, "--library", str(path)],
        "get_highlight",
        lambda: {"highlight_id": next(cycle)},
        n_stdio,
    )
    samples["minimal_echo_stdio"] = anyio.run(
        _mcp_stdio,
        [PYTHON, str(BENCH_DIR / "minimal_server.py")],
        "echo",
        lambda: {"text": "hello"},
        n_stdio,
    )
    stats = {name: summary_ms(values) for name, values in samples.items()}
    local = stats["local_service"]["p50_ms"]
    client = stats["client"]["p50_ms"]
    for entry in stats.values():
        entry["ratio_to_local_service"] = ratio(entry["p50_ms"], local)
        entry["ratio_to_client"] = ratio(entry["p50_ms"], client)
    stats["mcp_in_process"]["ratio_to_minimal_echo"] = ratio(
        stats["mcp_in_process"]["p50_ms"], stats["minimal_echo_in_process"]["p50_ms"]
    )
    stats["mcp_in_process"]["ratio_to_thread_hop"] = ratio(
        stats["mcp_in_process"]["p50_ms"], stats["mcp_in_process_thread_hop"]["p50_ms"]
    )
    stats["mcp_in_process_thread_hop"]["ratio_to_minimal_echo"] = ratio(
        stats["mcp_in_process_thread_hop"]["p50_ms"], stats["minimal_echo_in_process"]["p50_ms"]
    )
    stats["mcp_stdio"]["ratio_to_minimal_echo"] = ratio(
        stats["mcp_stdio"]["p50_ms"], stats["minimal_echo_stdio"]["p50_ms"]
    )
    return stats
