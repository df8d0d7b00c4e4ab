"""CPU a `screvi-mcp` process spends per entry point, and which heavy packages it imports.

    .venv/bin/python -m bench.startup_cpu [--runs 10] [--only api,export] [--baseline OLD_SRC]

The entry points run `--runs` times in turns (so load from other processes hits them
alike); the figure is the median of each process's own user+sys CPU (os.wait4), which a
busy machine inflates far less than wall time. One more run with PYTHONPROFILEIMPORTTIME
names the heavy packages it imported. Servers stop after their first answer (stdio:
`initialize`; `api`: one request). Everything stays on 127.0.0.1; the hosted key points at
a port nothing listens on (a hosted start-up must not call out).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from bench.cold_start import INITIALIZE
from bench.common import SCREVI_MCP as SCREVI
from bench.common import free_port, wait_for_port

HEAVY = ("mcp", "pydantic", "httpx", "uvicorn", "starlette", "numpy", "onnxruntime", "fsrs")
Run = Callable[[dict[str, str], IO[Any] | int], float]


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SCREVI_")}
    base.update(SCREVI_ENGLISH_MODEL="minilm", SCREVI_AUTO_INSTALL_MODEL="0")
    base.update(extra)
    return base


def cpu_of(process: subprocess.Popen[bytes]) -> float:
    """The process's own CPU seconds, read as it is reaped."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def spawn(args: list[str], environ: dict[str, str], stderr: IO[Any] | int, **kw: Any) -> Any:
    return subprocess.Popen([SCREVI, *args], env=environ, stderr=stderr, **kw)


def oneshot(
    args: list[str], environ: dict[str, str], before: Callable[[], None] = lambda: None
) -> Run:
    def run(extra: dict[str, str], stderr: IO[Any] | int) -> float:
        before()
        process = spawn(
            args, {**environ, **extra}, stderr, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
        cpu = cpu_of(process)
        if process.returncode not in (0, 1):  # check answers 1 for an offline model cache
            raise RuntimeError(f"{args} exited {process.returncode}")
        return cpu

    return run


def stdio(args: list[str], environ: dict[str, str]) -> Run:
    def run(extra: dict[str, str], stderr: IO[Any] | int) -> float:
        process = spawn(
            args, {**environ, **extra}, stderr, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        if "result" not in answer:
            raise RuntimeError(f"initialize failed: {answer}")
        process.stdin.close()
        return cpu_of(process)

    return run


def start_api(library: Path, environ: dict[str, str], stderr: IO[Any] | int) -> tuple[Any, str]:
    port = free_port()
    process = spawn(
        ["api", "--library", str(library), "--port", str(port)],
        environ,
        stderr,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    wait_for_port(port, process)
    url = f"http://127.0.0.1:{port}/api/v1"
    # The one request its figure includes; any answer, an HTTP error too, means serving.
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(f"{url}/skill.md", timeout=30).close()
    return process, url


def api(library: Path, environ: dict[str, str]) -> Run:
    def run(extra: dict[str, str], stderr: IO[Any] | int) -> float:
        process, _ = start_api(library, {**environ, **extra}, stderr)
        process.send_signal(signal.SIGINT)
        return cpu_of(process)

    return run


def entry_points(work: Path, source_url: str, source_key: str) -> dict[str, Run]:
    library, mirror = work / "library.sqlite3", work / "mirror.sqlite3"
    local = env()
    hosted = env(
        SCREVI_API_KEY="sk_live_startup_cpu_not_real",
        SCREVI_BASE_URL=f"http://127.0.0.1:{free_port()}/api/v1",
    )
    imported = work / "imported.sqlite3"
    return {
        "--help": oneshot(["--help"], local),
        "stdio embedded": stdio(["--library", str(library)], local),
        "stdio hosted": stdio([], hosted),
        "api": api(library, local),
        "keys list": oneshot(["keys", "list", "--library", str(library)], local),
        "export json": oneshot(
            ["export", "json", "--quiet", "--library", str(library), str(work / "out.json")],
            local,
        ),
        "import readwise": oneshot(
            ["import", "readwise", "--quiet", "--library", str(imported), str(work / "in.csv")],
            local,
            before=lambda: imported.unlink(missing_ok=True),
        ),
        "review": oneshot(["review", "--library", str(library), "--markdown"], local),
        "check": oneshot(["check", "--library", str(library)], local),
        "sync": oneshot(
            ["sync", "--quiet", "--library", str(mirror)],
            env(SCREVI_API_KEY=source_key, SCREVI_BASE_URL=source_url),
            before=lambda: mirror.unlink(missing_ok=True),
        ),
    }


def heavy_in(trace: Path) -> list[str]:
    names = set()
    for line in trace.read_text(errors="replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return [name for name in HEAVY if name in names]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--only", default="", help="entry points whose names contain these")
    parser.add_argument("--baseline", default="", help="another src/ to compare with")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        library = work / "library.sqlite3"
        key = prepare(library, work / "in.csv")
        source = work / "source.sqlite3"
        source.write_bytes(library.read_bytes())
        server, url = start_api(source, env(), subprocess.DEVNULL)
        try:
            measure(entry_points(work, url, key), options, work)
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def prepare(library: Path, csv_file: Path) -> str:
    """The sample library, a Readwise CSV of it to import, and a key to sync it with."""

    def screvi(*args: str) -> str:
        done = subprocess.run(
            [SCREVI, *args, "--library", str(library)],
            env=env(),
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    screvi("sample")
    screvi("export", "csv", str(csv_file))
    return screvi("keys", "create", "--name", "sync")


def measure(runs: dict[str, Run], options: argparse.Namespace, work: Path) -> None:
    """Median CPU per entry point; with --baseline, that source tree's beside this one's,
    run in turns in the same rounds."""
    wanted = [n for n in runs if not options.only or any(w in n for w in options.only.split(","))]
    trees = {"now": os.environ.get("PYTHONPATH", "")}
    if options.baseline:
        trees = {"before": options.baseline, **trees}
    cpu: dict[tuple[str, str], list[float]] = {(n, t): [] for n in wanted for t in trees}
    for _ in range(options.runs):
        for name in wanted:
            for tree, path in trees.items():
                cpu[name, tree].append(runs[name]({"PYTHONPATH": path}, subprocess.DEVNULL))
    header = "  ".join(f"{tree + ' CPU s':>12}" for tree in trees)
    print(f"| {'entry point':18} | {header} | heavy imports ({' -> '.join(trees)})")
    for name in wanted:
        medians, heavy = [], []
        for tree, path in trees.items():
            trace = work / "trace.txt"
            with trace.open("w") as sink:
                runs[name]({"PYTHONPATH": path, "PYTHONPROFILEIMPORTTIME": "1"}, sink)
            medians.append(f"{statistics.median(cpu[name, tree]):12.2f}")
            heavy.append(" ".join(heavy_in(trace)) or "-")
        print(f"| {name:18} | {'  '.join(medians)} | {' -> '.join(heavy)}")


if __name__ == "__main__":
    main()
