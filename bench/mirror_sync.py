"""Mirror benchmarks: sync throughput against the rate limit's ceiling, and search latency on
a mirror against the same search over HTTP to the "hosted" server, in one run.

    python -m bench.mirror_sync [--size 2000] [--queries 100] [--tiny]

The "hosted" server is a generated library served by `screvi-mcp api` in its own process on
127.0.0.1 (no rate limit, so the sync's own speed is what is measured). Then:

1. A full sync with no request budget: items per minute the sync itself can store and embed
   (the CPU/HTTP bound), and items per request.
2. The ceiling the hosted limit sets: budget (90 requests/min by default) x items per
   request. A long sync runs at the lower of the two; the table gives both and their ratio.
3. The same search queries on the mirror (in-process, as `screvi-mcp --mirror` answers them)
   and over HTTP to the server: p50/p99 and the ratio. Loopback HTTP has no network latency;
   a real hosted call adds the round trip to the internet on top.

Writes `bench/results/mirror.json`. Numbers depend on the machine's load: read the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus, libraries
from bench.common import (
    RESULTS_DIR,
    SCREVI_MCP,
    clean_env,
    free_port,
    log,
    machine,
    ratio,
    run_worker,
    summary_ms,
    wait_for_port,
)


async def _measure(
    base_url: str, key: str, mirror: Path, queries: list[str], budget: int
) -> dict[str, Any]:
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.mirror.sync import SyncSettings, build_client, run_sync

    settings = SyncSettings(requests_per_minute=1_000_000)
    client, clock = build_client(key, base_url, settings)
    library = Library.open(mirror)
    try:
        async with client:
            started = time.perf_counter()
            summary = await run_sync(library, client, clock, api_key=key, settings=settings)
            seconds = time.perf_counter() - started
    finally:
        library.close()
    items = sum(
        summary.applied[name].created + summary.applied[name].updated
        for name in ("tags", "sources", "highlights", "articles")
    )
    per_request = items / max(1, summary.requests)
    measured_per_min = items / seconds * 60
    ceiling_per_min = budget * per_request
    sync = {
        "items": items,
        "requests": summary.requests,
        "items_per_request": round(per_request, 2),
        "seconds": round(seconds, 2),
        "unbudgeted_items_per_min": round(measured_per_min),
        "budget_requests_per_min": budget,
        "rate_ceiling_items_per_min": round(ceiling_per_min),
        "ratio_unbudgeted_to_ceiling": ratio(measured_per_min, ceiling_per_min),
        "expected_items_per_min_under_budget": round(min(measured_per_min, ceiling_per_min)),
    }

    # In a fresh process, so the sync's model and threads do not weigh on the mirror's side.
    search = run_worker(
        [
            "-m",
            "bench.mirror_sync",
            "--search-worker",
            str(mirror),
            base_url,
            key,
            str(len(queries)),
        ]
    )
    return {"sync": sync, "search": search}


async def _search_worker(mirror: Path, base_url: str, key: str, count: int) -> dict[str, Any]:
    """Each query on the mirror, then over HTTP, alternating, so load drifts hit both alike."""
    from screvi_mcp.client.client import ScreviClient
    from screvi_mcp.local.api.seam import EmbeddedLibrary

    queries = corpus.queries(count)
    on_mirror: list[float] = []
    over_http: list[float] = []
    served = EmbeddedLibrary(mirror, rate_limit_per_minute=1_000_000)
    await served.start()
    async with (
        ScreviClient(**{**served.client_options(), "rate_limit": None}) as local,
        ScreviClient.hosted(key, base_url=base_url, rate_limit=None) as remote,
    ):
        for target in (local, remote):
            await target.search("warm up the model and the connection")
        for query in queries:
            for target, samples in ((local, on_mirror), (remote, over_http)):
                began = time.perf_counter()
                await target.search(query, per_page=20)
                samples.append(time.perf_counter() - began)
    mirror_ms, http_ms = summary_ms(on_mirror), summary_ms(over_http)
    return {
        "mirror": mirror_ms,
        "http_to_server": http_ms,
        "ratio_mirror_to_http_p50": ratio(mirror_ms["p50_ms"], http_ms["p50_ms"]),
    }


def run(size: int, query_count: int, budget: int) -> dict[str, Any]:
    from screvi_mcp.local.api import keys
    from screvi_mcp.local.storage.library import Library

    built = libraries.library_for(size, use_cache=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-mirror-"))
    server = None
    try:
        hosted = libraries.copy_library(built.path, workdir / "hosted.sqlite3")
        library = Library.open(hosted)
        try:
            _, key = keys.create_key(library, "bench", write=True)
        finally:
            library.close()
        port = free_port()
        server = subprocess.Popen(
            [
                SCREVI_MCP,
                "api",
                "--library",
                str(hosted),
                "--port",
                str(port),
                "--rate-limit",
                "1000000",
            ],
            env=clean_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(port, server)
        log(f"mirror: syncing {size} highlights from 127.0.0.1:{port}")
        results = asyncio.run(
            _measure(
                f"http://127.0.0.1:{port}/api/v1",
                key,
                workdir / "mirror.sqlite3",
                corpus.queries(query_count),
                budget,
            )
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)
    return {"size": size, "machine": machine(), **results}


def main() -> None:
    from screvi_mcp.mirror.sync import DEFAULT_REQUESTS_PER_MINUTE

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--budget", type=int, default=DEFAULT_REQUESTS_PER_MINUTE)
    parser.add_argument("--tiny", action="store_true", help="toy sizes, for CI")
    parser.add_argument("--search-worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.search_worker:
        mirror, base_url, key, count = args.search_worker
        print(json.dumps(asyncio.run(_search_worker(Path(mirror), base_url, key, int(count)))))
        return
    size, queries = (200, 10) if args.tiny else (args.size, args.queries)
    results = run(size, queries, args.budget)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / ("mirror-tiny.json" if args.tiny else "mirror.json")
    out.write_text(json.dumps(results, indent=2) + "\n")
    sync, search = results["sync"], results["search"]
    print(f"Mirror benchmark, {size} highlights ({out.name})")
    print(
        f"  sync, no budget: {sync['unbudgeted_items_per_min']:,} items/min "
        f"({sync['items']} items, {sync['requests']} requests, {sync['seconds']} s)"
    )
    print(
        f"  rate ceiling at {sync['budget_requests_per_min']} requests/min: "
        f"{sync['rate_ceiling_items_per_min']:,} items/min "
        f"(ratio unbudgeted/ceiling {sync['ratio_unbudgeted_to_ceiling']})"
    )
    print(
        f"  search p50: mirror {search['mirror']['p50_ms']:.1f} ms, HTTP "
        f"{search['http_to_server']['p50_ms']:.1f} ms (ratio {search['ratio_mirror_to_http_p50']});"
        f" p99 {search['mirror']['p99_ms']:.1f} vs {search['http_to_server']['p99_ms']:.1f} ms"
    )


if __name__ == "__main__":
    main()
