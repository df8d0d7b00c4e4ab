"""Section 1: cold start, from spawning a stdio server to its `initialize` response.

Measured with raw JSON-RPC lines over pipes, so no client library's own start-up is in the
figure. The minimal server, screvi-mcp in hosted mode and screvi-mcp over an embedded
library are spawned in turns, so that load from other processes hits them alike.

The import check runs the real start-up under `python -X importtime`: hosted mode must not
import the local search stack, and embedded mode must not load the model (onnxruntime)
before the first tool call.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import (
    BENCH_DIR,
    PYTHON,
    SCREVI_MCP,
    UNREACHABLE_API,
    Settings,
    clean_env,
    log,
    percentile,
    ratio,
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "screvi-bench", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# Modules that belong to the embedded library's search and article stacks.
HEAVY_MODULES = ("numpy", "onnxruntime", "tokenizers", "trafilatura", "lxml", "pypdf", "nh3")
HOSTED_KEY = "sk_live_benchmark_key_not_real"


def _variants(library: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    return {
        "minimal": ([PYTHON, str(BENCH_DIR / "minimal_server.py")], clean_env()),
        "screvi_hosted": (
            [SCREVI_MCP],
            clean_env(SCREVI_API_KEY=HOSTED_KEY, SCREVI_BASE_URL=UNREACHABLE_API),
        ),
        "screvi_embedded": ([SCREVI_MCP, "--library", str(library)], clean_env()),
    }


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def _read_response(process: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"server closed stdout before answering request {request_id}")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def time_to_initialize(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        _send(process, INITIALIZE)
        answer = _read_response(process, 1)
        elapsed = time.perf_counter() - started
        if "result" not in answer:
            raise RuntimeError(f"initialize failed: {answer}")
        return elapsed
    finally:
        _stop(process)


class _StderrLines:
    """Collects a process's stderr lines on a thread, so they can be split before/after."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            with self._lock:
                self.lines.append(raw.decode(errors="replace"))

    def snapshot(self) -> list[str]:
        with self._lock:
            return list(self.lines)

    def join(self) -> None:
        self._thread.join(timeout=15)


def _imported(lines: list[str]) -> set[str]:
    names = set()
    for line in lines:
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name.split(".")[0])
    return names


def import_check(library: Path, query: str) -> dict[str, Any]:
    """Which heavy modules each mode imports before `initialize` returns, and after a call."""
    out: dict[str, Any] = {}
    for mode, (command, env) in _variants(library).items():
        if mode == "minimal":
            continue
        started = time.perf_counter()
        process = subprocess.Popen(
            [
                PYTHON,
                "-X",
                "importtime",
                "-c",
                "import sys; from screvi_mcp.cli import main; sys.exit(main(sys.argv[1:]))",
                *command[1:],
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        stderr = _StderrLines(process)
        record: dict[str, Any] = {}
        try:
            _send(process, INITIALIZE)
            _read_response(process, 1)
            record["initialize_ms"] = round((time.perf_counter() - started) * 1000, 1)
            _send(process, INITIALIZED)
            time.sleep(0.5)  # anything start-up would load in the background shows up here
            before = _imported(stderr.snapshot())
            record["heavy_imported_at_initialize"] = sorted(before & set(HEAVY_MODULES))
            record["modules_at_initialize"] = len(before)
            if mode == "screvi_embedded":
                call = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "search_highlights", "arguments": {"query": query}},
                }
                called = time.perf_counter()
                _send(process, call)
                answer = _read_response(process, 2)
                record["first_search_call_ms"] = round((time.perf_counter() - called) * 1000, 1)
                record["first_call_ok"] = not answer.get("result", {}).get("isError", True)
                time.sleep(0.2)
                after = _imported(stderr.snapshot())
                record["heavy_imported_after_first_call"] = sorted(after & set(HEAVY_MODULES))
        finally:
            _stop(process)
            stderr.join()
        out[mode] = record
    out["hosted_imports_no_local_stack"] = not out["screvi_hosted"]["heavy_imported_at_initialize"]
    out["embedded_model_not_loaded_at_initialize"] = (
        "onnxruntime" not in out["screvi_embedded"]["heavy_imported_at_initialize"]
    )
    return out


def run(settings: Settings, library: Path, query: str) -> dict[str, Any]:
    variants = _variants(library)
    # The tiny run starts only the minimal server here and takes screvi-mcp's two starts
    # from the import check's processes (slower under -X importtime; tiny figures mean
    # nothing): two server starts fewer, ~3.5 CPU-s.
    timed = {"minimal": variants["minimal"]} if settings.tiny else variants
    samples: dict[str, list[float]] = {name: [] for name in timed}
    if not settings.tiny:
        # One untimed start each: the first start after an install compiles .pyc files.
        for command, env in variants.values():
            time_to_initialize(command, env)
    for round_number in range(settings.cold_start_runs):
        for name, (command, env) in timed.items():
            samples[name].append(time_to_initialize(command, env))
        log(f"cold start round {round_number + 1}/{settings.cold_start_runs}")
    imports = import_check(library, query)
    for name in (name for name in variants if name not in timed):
        samples[name] = [imports[name]["initialize_ms"] / 1000]
    base = percentile(samples["minimal"], 50)
    result: dict[str, Any] = {"runs": settings.cold_start_runs, "variants": {}}
    for name, values in samples.items():
        p50 = percentile(values, 50)
        result["variants"][name] = {
            "p50_ms": round(p50 * 1000, 1),
            "min_ms": round(min(values) * 1000, 1),
            "max_ms": round(max(values) * 1000, 1),
            "ratio_to_minimal": ratio(p50, base),
        }
    result["imports"] = imports
    return result
