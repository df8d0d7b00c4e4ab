"""Section 5: streamable HTTP with 8 and 32 concurrent clients, calls per second.

Each server runs as its own process on a free 127.0.0.1 port; N SDK clients (one session
each, as N agents would have) call one tool in a loop for a fixed time. The minimal server
answers `echo`; screvi-mcp answers `get_highlight` from the embedded library. Both servers
stay up and take turns (minimal, screvi, minimal, screvi, ...) so that a change in the
machine's load hits both alike; each figure is the total over its rounds. The clients run
in this process, so on 2 cores they compete with the servers for CPU: the ratio between the
two servers is the figure to read, not the absolute rate. The server's own CPU time per
call (all its threads, from /proc) is the steadier measure of its cost under load.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from bench.common import (
    BENCH_DIR,
    BENCH_RATE_LIMIT,
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
    server_pid: int | None = None,
) -> dict[str, Any]:
    """`clients` sessions calling `tool` for `seconds`; several `url`s share the clients
    round-robin, as a load balancer would spread sessions over worker processes. With
    `server_pid`, the server process's CPU seconds over the timed window are counted too."""
    from mcp import Client

    urls = [url] if isinstance(url, str) else url

    counts = [0] * clients
    errors = [0] * clients
    first_error: list[str] = []
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
                if result.is_error:  # e.g. [rate_limited]: an answer, but not a call served
                    errors[number] += 1
                    if not first_error:
                        block = result.content[0] if result.content else None
                        first_error.append(str(getattr(block, "text", block))[:200])
                else:
                    counts[number] += 1

    started = 0.0
    cpu_before: float | None = None
    async with anyio.create_task_group() as group:
        for number in range(clients):
            group.start_soon(worker, number)
        await start_gate.wait()
        started = time.perf_counter()
        cpu_before = process_cpu_seconds(server_pid)
    elapsed = time.perf_counter() - started
    cpu_after = process_cpu_seconds(server_pid)
    total = sum(counts)
    # Calls answered without an error; errors are counted apart and never in the rate.
    out: dict[str, Any] = {
        "clients": clients,
        "seconds": round(elapsed, 2),
        "calls": total,
        "errors": sum(errors),
        "calls_per_s": round(total / elapsed, 1),
    }
    if first_error:
        out["first_error"] = first_error[0]
    if cpu_before is not None and cpu_after is not None and total:
        out["server_cpu_s"] = round(cpu_after - cpu_before, 3)
    return out


def process_cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of process `pid` (all threads), from /proc; None elsewhere."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def _combined(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """One figure from several timed windows of the same server and client count."""
    seconds = sum(window["seconds"] for window in windows)
    calls = sum(window["calls"] for window in windows)
    out: dict[str, Any] = {
        "clients": windows[0]["clients"],
        "rounds": len(windows),
        "seconds": round(seconds, 2),
        "calls": calls,
        "errors": sum(window["errors"] for window in windows),
        "calls_per_s": round(calls / seconds, 1) if seconds else 0.0,
        "calls_per_s_by_round": [window["calls_per_s"] for window in windows],
    }
    if calls and all("server_cpu_s" in window for window in windows):
        cpu = sum(window["server_cpu_s"] for window in windows)
        out["server_cpu_ms_per_call"] = round(cpu * 1000 / calls, 3)
    return out


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
    cycle = itertools.cycle(ids)
    plans: dict[str, tuple[list[str], str, Callable[[], dict[str, Any]]]] = {
        "minimal": (
            [PYTHON, str(BENCH_DIR / "minimal_server.py"), "--http"],
            "echo",
            lambda: {"text": "hello"},
        ),
        "screvi": (
            [SCREVI_MCP, "--transport", "streamable-http", "--library", str(path), "--port"],
            "get_highlight",
            lambda: {"highlight_id": next(cycle)},
        ),
    }
    ports = {name: free_port() for name in plans}
    processes: dict[str, subprocess.Popen[bytes]] = {}
    windows: dict[tuple[str, int], list[dict[str, Any]]] = {}
    try:
        for name, (command, _, _) in plans.items():
            processes[name] = _serve([*command, str(ports[name])], ports[name])
        for clients in settings.http_client_counts:
            for round_number in range(settings.http_rounds):
                for name, (_, tool, arguments) in plans.items():
                    log(f"streamable HTTP: {name}, {clients} clients, round {round_number + 1}")
                    windows.setdefault((name, clients), []).append(
                        anyio.run(
                            _load,
                            f"http://127.0.0.1:{ports[name]}/mcp",
                            tool,
                            arguments,
                            clients,
                            settings.http_seconds,
                            processes[name].pid,
                        )
                    )
    finally:
        for process in processes.values():
            _stop(process)
    by_clients: dict[str, Any] = {}
    for clients in settings.http_client_counts:
        minimal = _combined(windows[("minimal", clients)])
        screvi = _combined(windows[("screvi", clients)])
        screvi["ratio_to_minimal"] = ratio(screvi["calls_per_s"], minimal["calls_per_s"])
        if "server_cpu_ms_per_call" in screvi and "server_cpu_ms_per_call" in minimal:
            # Inverted so that, like the rate ratio, 1.0 is as cheap as the minimal server.
            screvi["cpu_ratio_to_minimal"] = ratio(
                minimal["server_cpu_ms_per_call"], screvi["server_cpu_ms_per_call"]
            )
        by_clients[str(clients)] = {"minimal": minimal, "screvi": screvi}
    first = by_clients[str(settings.http_client_counts[0])]
    result: dict[str, Any] = {
        # The first client count (8) also under the keys earlier runs used.
        "minimal": first["minimal"],
        "screvi": first["screvi"],
        "by_clients": by_clients,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
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

    # Fresh workers for each figure; the tiny run starts two once and measures the first
    # alone before both (a server start is ~1.5 CPU-s, most of its cost).
    for counts in ((1, 2),) if settings.tiny else ((1,), (2,)):
        ports = [free_port() for _ in range(max(counts))]
        processes: list[subprocess.Popen[bytes]] = []
        try:
            for port in ports:
                processes.append(_serve(_stateless(port, path), port))
            for workers in counts:
                measure(
                    f"embedded_{workers}_worker{'s' if workers > 1 else ''}",
                    [f"http://127.0.0.1:{port}/mcp" for port in ports[:workers]],
                )
        finally:
            for process in processes:
                _stop(process)
    out["embedded_2_workers"]["ratio_to_1_worker"] = ratio(
        out["embedded_2_workers"]["calls_per_s"], out["embedded_1_worker"]["calls_per_s"]
    )

    from screvi_mcp.local.api.keys import create_key
    from screvi_mcp.local.storage.library import Library

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
            # The stand-in allows what the library's setting says (BENCH_RATE_LIMIT); the
            # client's own limiter would otherwise hold it to the hosted API's 100 a minute.
            SCREVI_RATE_LIMIT=str(BENCH_RATE_LIMIT),
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
