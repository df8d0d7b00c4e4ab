"""Section 5: streamable HTTP with 8 concurrent clients, calls per second.

Each server runs as its own process on a free 127.0.0.1 port; 8 SDK clients (one session
each, as 8 agents would have) call one tool in a loop for a fixed time. The minimal server
answers `echo`; screvi-mcp answers `get_highlight` from the embedded library. The clients
run in this process, so on 2 cores they compete with the server for CPU: the ratio between
the two servers is the figure to read, not the absolute rate.
"""

from __future__ import annotations

import itertools
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from bench.common import (
    BENCH_DIR,
    PYTHON,
    SCREVI_MCP,
    Settings,
    clean_env,
    free_port,
    log,
    ratio,
    wait_for_port,
)


async def _load(
    url: str | list[str],
    tool: str,
    arguments: Callable[[], dict[str, Any]],
    clients: int,
    seconds: float,
) -> dict[str, Any]:
    """`clients` sessions calling `tool` for `seconds`; several `url`s share the clients
    round-robin, as a load balancer would spread sessions over worker processes."""
    from mcp import Client

    urls = [url] if isinstance(url, str) else url

    counts = [0] * clients
    errors = [0] * clients
    start_gate = anyio.Event()
    ready = [0]
    deadline = [0.0]

    async def worker(number: int) -> None:
        async with Client(urls[number % len(urls)], cache=None) as client:
            await client.call_tool(tool, arguments())  # session and first-call costs
            ready[0] += 1
            if ready[0] == clients:
                deadline[0] = time.perf_counter() + seconds
                start_gate.set()
            await start_gate.wait()
            while time.perf_counter() < deadline[0]:
                result = await client.call_tool(tool, arguments())
                if result.is_error:
                    errors[number] += 1
                counts[number] += 1

    started = 0.0
    async with anyio.create_task_group() as group:
        for number in range(clients):
            group.start_soon(worker, number)
        await start_gate.wait()
        started = time.perf_counter()
    elapsed = time.perf_counter() - started
    total = sum(counts)
    return {
        "clients": clients,
        "seconds": round(elapsed, 2),
        "calls": total,
        "errors": sum(errors),
        "calls_per_s": round(total / elapsed, 1),
    }


def _serve(command: list[str], port: int) -> subprocess.Popen[bytes]:
    return _serve_env(command, port)


def _serve_env(command: list[str], port: int, **env: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=clean_env(**env),
    )
    try:
        wait_for_port(port, process)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return process


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run(settings: Settings, path: Path, ids: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    port = free_port()
    process = _serve([PYTHON, str(BENCH_DIR / "minimal_server.py"), "--http", str(port)], port)
    try:
        log("streamable HTTP: minimal server")
        result["minimal"] = anyio.run(
            _load,
            f"http://127.0.0.1:{port}/mcp",
            "echo",
            lambda: {"text": "hello"},
            settings.http_clients,
            settings.http_seconds,
        )
    finally:
        _stop(process)
    port = free_port()
    process = _serve(
        [SCREVI_MCP, "--transport", "streamable-http", "--port", str(port), "--library", str(path)],
        port,
    )
    cycle = itertools.cycle(ids)
    try:
        log("streamable HTTP: screvi-mcp")
        result["screvi"] = anyio.run(
            _load,
            f"http://127.0.0.1:{port}/mcp",
            "get_highlight",
            lambda: {"highlight_id": next(cycle)},
            settings.http_clients,
            settings.http_seconds,
        )
    finally:
        _stop(process)
    result["screvi"]["ratio_to_minimal"] = ratio(
        result["screvi"]["calls_per_s"], result["minimal"]["calls_per_s"]
    )
    result["scale_out"] = _scale_out(settings, path, ids)
    return result


def _stateless(port: int, library: Path | None = None) -> list[str]:
    command = [SCREVI_MCP, "--transport", "streamable-http", "--stateless", "--port", str(port)]
    return [*command, "--library", str(library)] if library is not None else command


def _scale_out(settings: Settings, path: Path, ids: list[str]) -> dict[str, Any]:
    """Stateless HTTP behind a (client-side) balancer: one worker process on the library,
    two on the same library file, and one in hosted mode against a second process serving
    the library's REST API as the hosted stand-in. Same clients and tool throughout."""
    out: dict[str, Any] = {}
    cycle = itertools.cycle(ids)

    def arguments() -> dict[str, Any]:
        return {"highlight_id": next(cycle)}

    def measure(label: str, urls: list[str]) -> None:
        log(f"streamable HTTP, stateless: {label}")
        out[label] = anyio.run(
            _load, urls, "get_highlight", arguments, settings.http_clients, settings.http_seconds
        )

    for workers in (1, 2):
        ports = [free_port() for _ in range(workers)]
        processes: list[subprocess.Popen[bytes]] = []
        try:
            for port in ports:
                processes.append(_serve(_stateless(port, path), port))
            measure(
                f"embedded_{workers}_worker{'s' if workers > 1 else ''}",
                [f"http://127.0.0.1:{port}/mcp" for port in ports],
            )
        finally:
            for process in processes:
                _stop(process)
    out["embedded_2_workers"]["ratio_to_1_worker"] = ratio(
        out["embedded_2_workers"]["calls_per_s"], out["embedded_1_worker"]["calls_per_s"]
    )

    from screvi_mcp.local.keys import create_key
    from screvi_mcp.local.library import Library

    library = Library.open(path)
    try:
        _, key = create_key(library, "bench hosted stand-in")
    finally:
        library.close()
    api_port, mcp_port = free_port(), free_port()
    api = _serve([SCREVI_MCP, "api", "--port", str(api_port), "--library", str(path)], api_port)
    try:
        hosted = _serve_env(
            _stateless(mcp_port),
            mcp_port,
            SCREVI_API_KEY=key,
            SCREVI_BASE_URL=f"http://127.0.0.1:{api_port}/api/v1",
        )
        try:
            measure("hosted_1_worker", [f"http://127.0.0.1:{mcp_port}/mcp"])
        finally:
            _stop(hosted)
    finally:
        _stop(api)
    out["hosted_1_worker"]["ratio_to_embedded_1_worker"] = ratio(
        out["hosted_1_worker"]["calls_per_s"], out["embedded_1_worker"]["calls_per_s"]
    )
    return out
