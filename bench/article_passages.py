"""Passage search inside saved articles at scale (issue 26): `python -m bench.article_passages`.

Builds a library of `--articles` articles of about `--chars` characters each (paragraphs of
the labelled set of long articles, shuffled, with an article-specific code word in each, so texts
differ), written through `Library.write` as the fetcher writes bodies: that is where
passages and their keyword rows are made. Then measures:

- keyword indexing throughput (characters and passages per second of writes) and file size;
- embedding throughput of the real model on a sample of passages (the full library is not
  embedded: at the measured rate that takes the figure printed as `embed_all_minutes`);
- search p50/p95 over all passages, with random unit vectors stored for every passage
  (the scan costs the same as with real vectors; queries are embedded by the real model),
  wall and CPU time, beside a same-run baseline: the same searches with the exact float32
  scan of every vector (what passage search did before it compared sign codes first);
- memory of the loaded passage vectors (RSS growth), and the delay from a new article's
  commit to its passage being found by meaning, in that library, with the worker idle.

Writes bench/results/article_passages-<model>.json. No network; everything on this machine.
It is also the `articles` section of `python -m bench` (`measure`: 2,000 articles, or a
dozen with `--tiny`), run in a fresh process and printed with a target check (p50 <= 50 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import ratio, run_worker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from local.passages.labelled_set import ARTICLES, QUERIES
from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.passages import attach
from screvi_mcp.local.passages.index import SIGN_FROM_ROWS
from screvi_mcp.local.passages.search import (
    PassageFilters,
    PassageQuery,
    search_passages,
)
from screvi_mcp.local.storage.library import Library

RESULTS = Path(__file__).resolve().parent / "results"
PARAGRAPHS = [p for article in ARTICLES for p in article.paragraphs]


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _text(rng: random.Random, number: int, chars: int) -> str:
    parts: list[str] = []
    size = 0
    while size < chars:
        paragraph = f"{rng.choice(PARAGRAPHS)} (ref{number}x{len(parts)})"
        parts.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(parts)


def build(library: Library, count: int, chars: int) -> dict[str, float]:
    rng = random.Random(26)
    started = time.perf_counter()
    total = 0
    for number in range(count):
        text = _text(rng, number, chars)
        total += len(text)
        with library.write() as conn:
            article_id = article_rows.insert_article(
                conn, f"http://bench.test/{number}", f"http://bench.test/{number}"
            )
            conn.execute(
                "UPDATE articles SET content_text = ?, title = ?, parse_state = 'parsed' "
                "WHERE source_id = ?",
                (text, f"Article {number}", article_id),
            )
    seconds = time.perf_counter() - started
    passages = library.connection().execute("SELECT count(*) FROM article_passages").fetchone()[0]
    return {
        "articles": count,
        "characters": total,
        "passages": passages,
        "write_seconds": round(seconds, 1),
        "chars_per_second": round(total / seconds),
        "passages_per_second": round(passages / seconds),
    }


def embed_rate(index: Any, sample: int) -> float:
    conn = index.library.connection()
    texts = [r[0] for r in conn.execute("SELECT text FROM article_passages LIMIT ?", (sample,))]
    started = time.perf_counter()
    index.embedder.embed(texts)
    return len(texts) / (time.perf_counter() - started)


def random_vectors(library: Library, index: Any) -> None:
    """A random unit vector for every passage, stored as the worker would store real ones."""
    rng = np.random.default_rng(26)
    conn = library.connection()
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM article_passages")]
    for start in range(0, len(ids), 5000):
        chunk = ids[start : start + 5000]
        vectors = rng.standard_normal((len(chunk), index.embedder.dimensions)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with library.write() as write:
            write.executemany(
                # ON CONFLICT: the worker may have embedded a few before it was detached.
                "INSERT INTO passage_embeddings(seq, model, text_hash, vector) "
                "VALUES (?, ?, '', ?) ON CONFLICT(seq) DO UPDATE SET vector = excluded.vector",
                [
                    (i, index.model_id, v.astype("<f4").tobytes())
                    for i, v in zip(chunk, vectors, strict=True)
                ],
            )
            write.execute("DELETE FROM passage_embedding_queue")


def search_times(library: Library, index: Any, label: str, count: int) -> dict[str, float]:
    """The first `count` labelled queries once each (made distinct per run with `label`, so
    the query-vector cache never answers), end to end in wall and CPU time, and its parts:
    query embedding, keyword side, vector scan (the query vector cached)."""
    from screvi_mcp.local.passages.search import keyword_ranking

    conn = library.connection()
    queries = [f"{q.text} {label}" for q in QUERIES[:count]]
    search_passages(conn, index, PassageQuery(f"warm up {label}", PassageFilters()), root_url="x")
    times, cpu, embed, keyword, scan = [], [], [], [], []
    for text in queries:
        started, cpu_started = time.perf_counter(), time.process_time()
        search_passages(conn, index, PassageQuery(text, PassageFilters()), root_url="x")
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        started = time.perf_counter()
        index.embedder.embed([text])
        embed.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        keyword_ranking(conn, text, PassageFilters())
        keyword.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        index.top(text, 300)  # cached query vector: the scan alone
        scan.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "n": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[int(0.95 * len(times)) - 1], 1),
        "cpu_p50_ms": round(statistics.median(cpu), 1),
        "query_embedding_p50_ms": round(statistics.median(embed), 1),
        "keyword_side_p50_ms": round(statistics.median(keyword), 1),
        "vector_scan_p50_ms": round(statistics.median(scan), 1),
    }


def search_against_baseline(library: Library, index: Any, count: int) -> dict[str, Any]:
    """The shipped search, then the baseline (exact float32 scan), then the shipped one
    again: the load of a shared machine drifts, so each is reported, and their ratio."""
    shipped = search_times(library, index, "a", count)
    index.matrix.set_sign_from_rows(10**12)  # a size never reached: float32 only
    baseline = search_times(library, index, "b", count)
    index.matrix.set_sign_from_rows(SIGN_FROM_ROWS)
    again = search_times(library, index, "c", count)
    best = min((shipped, again), key=lambda r: r["p50_ms"])
    return {
        "shipped": shipped,
        "shipped_again": again,
        "baseline_float32_scan": baseline,
        "p50_ratio_to_baseline": round(best["p50_ms"] / baseline["p50_ms"], 2),
    }


def delay_until_found(library: Library, index: Any) -> float:
    """Seconds from the commit of a new article to its passage found by meaning."""
    text = "Narwhals use their long spiral tusk to sense changes in the salinity of sea water."
    query = PassageQuery("what is the narwhal's tooth for", PassageFilters(), min_relevance=0.35)
    with library.write() as conn:
        article_id = article_rows.insert_article(
            conn, "http://bench.test/new", "http://bench.test/new"
        )
        conn.execute(
            "UPDATE articles SET content_text = ?, parse_state = 'parsed' WHERE source_id = ?",
            (text, article_id),
        )
    committed = time.perf_counter()
    deadline = committed + 120
    while time.perf_counter() < deadline:
        hits, _ = search_passages(library.connection(), index, query, root_url="x")
        if hits and hits[0]["article"]["id"] == article_id and hits[0]["similarity"]:
            return time.perf_counter() - committed
        time.sleep(0.01)
    return float("nan")


FULL = {"articles": 2000, "chars": 10_000, "sample": 256, "queries": len(QUERIES)}
# Five of the 107 queries: each pass (shipped, baseline, shipped again) embeds each twice,
# and all of them took two thirds of the tiny run's 10 CPU-s.
TINY = {"articles": 12, "chars": 3000, "sample": 8, "queries": 5}


def measure(tiny: bool = False) -> Any:
    """The section of `python -m bench`: one run in a fresh process (the model and the
    vectors' memory are its own); the tiny run's figures mean nothing."""
    sizes = TINY if tiny else FULL
    args = [f"--{key}={value}" for key, value in sizes.items()]
    return run_worker(["-m", "bench.article_passages", *args, "--no-write"], timeout=7200)


def table_rows(result: dict[str, Any], fmt: Any) -> list[tuple[str, str, str, str]]:
    """The section's rows for the table (`fmt` is the runner's number format)."""
    built, search = result["build"], result["search"]
    shipped, baseline = search["shipped"], search["baseline_float32_scan"]
    size = f"{built['articles']:,} articles, {built['passages']:,} passages"
    return [
        (
            f"Passage search in saved articles ({size}), p50 end to end",
            f"{fmt(shipped['p50_ms'])} and {fmt(search['shipped_again']['p50_ms'], ' ms')}",
            f"exact float32 scan {fmt(baseline['p50_ms'], ' ms')}",
            fmt(search["p50_ratio_to_baseline"], "x"),
        ),
        (
            "  its CPU time per query, p50",
            fmt(shipped["cpu_p50_ms"], " ms"),
            f"exact float32 scan {fmt(baseline['cpu_p50_ms'], ' ms')}",
            fmt(ratio(shipped["cpu_p50_ms"], baseline["cpu_p50_ms"]), "x"),
        ),
        (
            "  keyword indexing (passages + FTS5 rows, in the writes)",
            f"{fmt(built['chars_per_second'])} chars/s",
            f"{fmt(built['passages_per_second'])} passages/s",
            "-",
        ),
        (
            "  embedding (one worker) / all passages",
            fmt(result["embed_passages_per_second"], " passages/s"),
            fmt(result["embed_all_minutes"], " min"),
            "-",
        ),
        (
            "  library file / passage vectors in memory (RSS growth)",
            fmt(result["file_mb"], " MB"),
            fmt(result["vectors_rss_mb"], " MB"),
            "-",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.article_passages")
    parser.add_argument("--articles", type=int, default=FULL["articles"])
    parser.add_argument("--chars", type=int, default=FULL["chars"])
    parser.add_argument("--sample", type=int, default=FULL["sample"], help="passages embedded")
    parser.add_argument("--queries", type=int, default=FULL["queries"], help="labelled queries")
    parser.add_argument("--no-write", action="store_true", help="print only (no results file)")
    args = parser.parse_args()
    results = run(args.articles, args.chars, args.sample, args.queries)
    if not args.no_write:
        model = "mpnet" if "mpnet" in results["model"] else "minilm"
        out = RESULTS / f"article_passages-{model}.json"
        out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results))  # one line, last: what `bench.common.run_worker` reads


def run(articles: int, chars: int, sample: int, queries: int) -> dict[str, Any]:
    # The English side only: the shuffled paragraphs make some articles read as Spanish or
    # German, and the multilingual model's worker would embed them during the timings.
    # (Its list scans only non-English articles' passages; not measured here.)
    os.environ["SCREVI_MULTILINGUAL"] = "off"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lib.sqlite3"
        library = Library.open(path)
        results: dict[str, Any] = {
            "load_average": os.getloadavg()[0],
            "build": build(library, articles, chars),
        }
        library.close()
        results["file_mb"] = round(sum(p.stat().st_size for p in path.parent.iterdir()) / 2**20, 1)
        library = Library.open(path)
        index = attach.attach(library)
        assert index is not None, "the local extra (numpy, the model) is needed"
        results["model"] = index.embedder.model_id
        attach.detach(library)  # no worker: the sample below is embedded on this thread
        rate = embed_rate(index, sample)
        results["embed_passages_per_second"] = round(rate, 1)
        results["embed_all_minutes"] = round(results["build"]["passages"] / rate / 60, 1)
        random_vectors(library, index)
        before = _rss_mb()
        index = attach.attach(library)
        assert index is not None
        index.top("warm up", 10)  # the scan's matrix is built on the first search
        results["vectors_rss_mb"] = round(_rss_mb() - before, 1)
        results["search"] = search_against_baseline(library, index, queries)
        results["delay_until_found_by_meaning_s"] = round(delay_until_found(library, index), 2)
        attach.detach(library)
        library.close()
    results["load_average_end"] = os.getloadavg()[0]
    return results


if __name__ == "__main__":
    main()
