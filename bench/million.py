"""A million highlights: search through the compact index against the exact float32 scan.

    python -m bench --sections million          (or --tiny: 2,000 highlights)
    python -m bench.million [--size 1000000] [--queries 40]

The library is built once and cached in bench/.cache/ (about 4 GB: the float32 vectors stay
in SQLite). Its text is the benchmark corpus (bench/corpus.py; the 10,000 passages of the
10k library, each a hundred times over other sources and tags), so the keyword side meets
posting lists of a real library's shape. Its vectors are synthetic, 768 components as
all-mpnet-base-v2's (the default model): each passage has a vector (a shared direction, a
topic and its own direction, as sentence embeddings crowd together) and each highlight that
vector plus noise of its own, so that near neighbours exist at every distance and the first
pass's recall means something. Queries get vectors the same way (a passage's, moved), put
into the index's query cache: the times are everything beyond embedding the query, whose
own cost is the `search_parts` section's (all-mpnet-base-v2's p50 beside it there).

Measured in fresh processes: the compact index (opening time, resident memory, whole hybrid
search p50 with the keyword-only search on a second handle alternating as baseline, the
vector side alone) and, in another, the exact float32 scan over all the vectors in memory
(the baseline for the vector side, and the truth the approximate pass's recall is measured
against: of the exact top 1,000 and top 100, how many the compact index returned).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import corpus
from bench.common import (
    BENCH_RATE_LIMIT,
    CACHE_DIR,
    log,
    machine,
    percentile,
    ratio,
    run_worker,
    summary_ms,
)

FULL_SIZE = 1_000_000
TINY_SIZE = 2_000
PASSAGES = 10_000
VERSION = 1
_SEED = 20261126


def _passage_vectors(passages: int, dimensions: int) -> np.ndarray:
    """One direction per passage: a shared direction, a topic (one of 1,000), its own."""
    rng = np.random.default_rng(_SEED)
    shared = rng.standard_normal(dimensions).astype(np.float32)
    topics = rng.standard_normal((1000, dimensions)).astype(np.float32)
    own = rng.standard_normal((passages, dimensions)).astype(np.float32)
    result: np.ndarray = 0.8 * shared + topics[rng.integers(0, 1000, passages)] + own
    return result


def highlight_vectors(base: np.ndarray, first: int, count: int) -> np.ndarray:
    """Vectors of highlights first..first+count (highlight i says passage i % passages)."""
    rng = np.random.default_rng([_SEED, first])
    rows = base[np.arange(first, first + count) % base.shape[0]]
    rows = rows + 0.35 * rng.standard_normal(rows.shape).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def query_vectors(base: np.ndarray, count: int) -> np.ndarray:
    """A passage's direction moved further than any highlight's: near many, equal to none."""
    rng = np.random.default_rng([_SEED, 7])
    rows = base[rng.integers(0, base.shape[0], count)]
    rows = rows + 0.6 * rng.standard_normal(rows.shape).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def library_path(size: int, dimensions: int, directory: Path = CACHE_DIR) -> Path:
    return directory / f"library-{size}-synthetic{dimensions}-v{VERSION}.sqlite3"


def build(size: int, directory: Path = CACHE_DIR) -> Path:
    """The library, built once (the `.json` beside it marks a complete build), with vectors
    of the configured model's width (all-mpnet-base-v2's 768 by default)."""
    from screvi_mcp.local.search.embedder import load_embedder

    path = library_path(size, load_embedder().dimensions, directory)
    done = path.with_suffix(".json")
    if path.exists() and done.exists():
        log(f"reusing {path.name}")
        return path
    for stale in (path, done, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    directory.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    _write_highlights(path, size)
    log(f"{size} highlights written in {time.perf_counter() - started:.0f} s; vectors next")
    _write_vectors(path, size)
    done.write_text(json.dumps({"size": size, "build_s": round(time.perf_counter() - started)}))
    return path


def _write_highlights(path: Path, size: int) -> None:
    from screvi_mcp.local.api.app import RATE_LIMIT_SETTING
    from screvi_mcp.local.api.bodies import HighlightCreate, SourceCreate
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights, sources

    library = Library.open(path)
    try:
        library.set_setting(RATE_LIMIT_SETTING, str(BENCH_RATE_LIMIT))
        source_ids = [
            sources.create(library, SourceCreate(name=s.name, type=s.type, author=s.author))["id"]
            for s in corpus.sources(max(5, min(size // 40, 25_000)))
        ]
        pool = corpus.highlights(min(PASSAGES, size), max(5, PASSAGES // 40))
        shape = corpus.highlights(10_000, len(source_ids), seed=12)
        for start in range(0, size, 1000):
            items = []
            for i in range(start, min(start + 1000, size)):
                text, other = pool[i % len(pool)], shape[(i * 7919) % len(shape)]
                source = (i * 31) % len(source_ids)
                items.append(
                    HighlightCreate(
                        content=text.content,
                        note=text.note,
                        favorite=other.favorite,
                        source_id=source_ids[source],
                        tags=other.tags or None,
                        location=other.location,
                    )
                )
            highlights.create_many(library, items, bulk=True)
            if start % 100_000 == 0:
                log(f"  {start + len(items)} highlights")
    finally:
        library.close()


def _write_vectors(path: Path, size: int) -> None:
    """Synthetic vectors stored as the default model's, the embedding queue emptied."""
    from screvi_mcp.local.search import embedding_rows
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.index import index_model_id
    from screvi_mcp.local.storage.library import Library

    embedder = load_embedder()  # the model this install searches with (mpnet: 768)
    model = index_model_id(embedder)
    base = _passage_vectors(min(PASSAGES, size), embedder.dimensions)
    library = Library.open(path)
    try:
        conn = library.connection()
        seqs = [int(row[0]) for row in conn.execute("SELECT seq FROM highlights ORDER BY seq")]
        for start in range(0, len(seqs), 5000):
            chunk = seqs[start : start + 5000]
            texts = embedding_rows.live_texts(conn, chunk)
            vectors = highlight_vectors(base, start, len(texts))
            with library.write() as write_conn:
                embedding_rows.save(write_conn, model, texts, vectors)
            if start % 100_000 == 0:
                log(f"  {start + len(chunk)} vectors")
        with library.write() as write_conn:
            write_conn.execute("DELETE FROM embedding_queue")
            write_conn.execute("DELETE FROM embedding_changes")
        library.set_setting(embedding_rows.MODEL_SETTING, model)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        library.close()


def _memory() -> dict[str, float]:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = round(int(value.split()[0]) / 1024, 1)
    return fields


def _cached_queries(index: Any, count: int) -> list[str]:
    """Query texts whose vectors are the synthetic ones, put into the index's query cache
    (as a repeated query finds them): the searches below embed nothing."""
    from screvi_mcp.local.search import engine

    texts = [engine.searched(engine.SearchQuery(q)).q for q in corpus.queries(count, seed=515)]
    base = _passage_vectors(PASSAGES, index.matrix.dimensions)
    for text, vector in zip(texts, query_vectors(base, count), strict=True):
        index._query_cache[text] = vector
    return texts


def compact_worker(path: Path, count: int, threshold: int | None) -> dict[str, Any]:
    """The compact index in this process: memory, opening, searches, its top 1,000s."""
    from screvi_mcp.local.search import attach, engine
    from screvi_mcp.local.search import index as index_module
    from screvi_mcp.local.search.compact_matrix import CompactMatrix
    from screvi_mcp.local.storage.library import Library

    if threshold is not None:  # the tiny run's library is far below the real threshold
        index_module.COMPACT_FROM_ROWS = threshold
    out: dict[str, Any] = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    out["memory_before_open_mib"] = _memory()
    started = time.perf_counter()
    library = Library.open(path)
    index = attach.attach_semantic_index(library, backfill="never")
    if index is None or not isinstance(index.matrix, CompactMatrix):
        raise RuntimeError("the library did not open compactly")
    out["open_s"] = round(time.perf_counter() - started, 2)
    out["memory_after_open_mib"] = _memory()
    out["codes_mib"] = round(index.matrix.resident_bytes / 2**20, 1)
    out["highlights"] = len(index.matrix)
    out["dimensions"] = index.matrix.dimensions
    texts = _cached_queries(index, count)
    bare = Library.open(path)
    wall: dict[str, list[float]] = {"hybrid": [], "keyword_only": [], "vector_side": []}
    try:
        for text in texts[:3]:
            engine.search(library, engine.SearchQuery(text))
            engine.search(bare, engine.SearchQuery(text))
        for text in texts:
            for name, handle in (("hybrid", library), ("keyword_only", bare)):
                started = time.perf_counter()
                engine.search(handle, engine.SearchQuery(text, per_page=20))
                wall[name].append(time.perf_counter() - started)
        floor = index.calibration.min_cosine(engine.SearchQuery("").min_relevance)
        tops = []
        for text in texts:
            vector = index._query_cache[text]
            started = time.perf_counter()
            index.matrix.top(vector, floor, 1000)
            wall["vector_side"].append(time.perf_counter() - started)
            tops.append([seq for seq, _ in index.matrix.top(vector, -1.0, 1000)])
        out["default_floor"] = round(floor, 4)
    finally:
        attach.detach_semantic_index(library)
        library.close()
        bare.close()
    for name, samples in wall.items():
        out[name] = summary_ms(samples)
    out["hybrid"]["ratio_to_keyword_only"] = ratio(
        out["hybrid"]["p50_ms"], out["keyword_only"]["p50_ms"]
    )
    out["memory_at_end_mib"] = _memory()
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out["top_1000"] = tops
    return out


def exact_worker(path: Path, count: int) -> dict[str, Any]:
    """The exact float32 scan: every stored vector in memory (what the compact index avoids
    holding), each query scanned in full; its top 1,000s are the truth for recall."""
    from screvi_mcp.local.search import embedding_rows
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.index import index_model_id
    from screvi_mcp.local.storage.library import Library

    embedder = load_embedder()
    library = Library.open(path)
    try:
        seq_list, matrix = embedding_rows.load_live(
            library.connection(), index_model_id(embedder), embedder.dimensions
        )
    finally:
        library.close()
    seqs = np.asarray(seq_list, dtype=np.int64)
    base = _passage_vectors(PASSAGES, embedder.dimensions)
    samples, tops = [], []
    for vector in query_vectors(base, count):
        started = time.perf_counter()
        scores = matrix @ vector
        best = np.argpartition(-scores, 999)[:1000]
        samples.append(time.perf_counter() - started)
        best = best[np.lexsort((seqs[best], -scores[best]))]
        tops.append(seqs[best].tolist())
    return {"scan": summary_ms(samples), "memory_mib": _memory(), "top_1000": tops}


def recall(approximate: list[list[int]], exact: list[list[int]]) -> dict[str, float]:
    """Of each exact top 1,000 and top 100, the share the approximate top 1,000 held."""
    at_1000 = [len(set(a) & set(e)) / len(e) for a, e in zip(approximate, exact, strict=True)]
    at_100 = [len(set(a) & set(e[:100])) / 100 for a, e in zip(approximate, exact, strict=True)]
    return {
        "top_1000_mean": round(float(np.mean(at_1000)), 4),
        "top_1000_worst": round(min(at_1000), 4),
        "top_100_mean": round(float(np.mean(at_100)), 4),
        "top_100_worst": round(min(at_100), 4),
        "p50_top_1000": round(percentile(at_1000, 50), 4),
    }


def measure(tiny: bool = False, size: int | None = None, count: int | None = None) -> Any:
    size = size or (TINY_SIZE if tiny else FULL_SIZE)
    count = count or (5 if tiny else 40)
    directory = Path(tempfile.mkdtemp(prefix="screvi-million-")) if tiny else CACHE_DIR
    path = build(size, directory)
    threshold = ["--threshold", "0"] if tiny else []
    compact = run_worker(
        ["-m", "bench.million", "--worker", "compact", str(path), str(count), *threshold],
        timeout=3600,
    )
    exact = run_worker(["-m", "bench.million", "--worker", "exact", str(path), str(count)])
    out = {key: value for key, value in compact.items() if key != "top_1000"}
    out["exact_scan"] = exact["scan"]
    out["exact_scan_memory_mib"] = exact["memory_mib"]
    out["vector_side"]["ratio_to_exact_scan"] = ratio(
        out["vector_side"]["p50_ms"], exact["scan"]["p50_ms"]
    )
    out["recall"] = recall(compact["top_1000"], exact["top_1000"])
    if tiny:
        shutil.rmtree(directory, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.million", description=__doc__)
    parser.add_argument("--size", type=int)
    parser.add_argument("--queries", type=int)
    parser.add_argument("--tiny", action="store_true", help="2,000 highlights (CI)")
    parser.add_argument("--worker", choices=("compact", "exact"), help=argparse.SUPPRESS)
    parser.add_argument("--threshold", type=int, help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker == "compact":
        path, count = Path(args.args[0]), int(args.args[1])
        print(json.dumps(compact_worker(path, count, args.threshold)))
    elif args.worker == "exact":
        print(json.dumps(exact_worker(Path(args.args[0]), int(args.args[1]))))
    else:
        result = {"machine": machine(), **measure(args.tiny, args.size, args.queries)}
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def table_rows(result: dict[str, Any], fmt: Any) -> list[tuple[str, str, str, str]]:
    """The section's rows for the table (`fmt` is the runner's number format)."""
    n, width = result["highlights"], result["dimensions"]
    memory = result["memory_at_end_mib"]
    hit = result["recall"]
    vector = result["vector_side"]
    return [
        (
            f"Search at {n:,} ({width}-d, compact index), beyond the query embedding, p50 / p99",
            f"{fmt(result['hybrid']['p50_ms'])} / {fmt(result['hybrid']['p99_ms'])} ms",
            f"keyword-only {fmt(result['keyword_only']['p50_ms'], ' ms')}",
            fmt(result["hybrid"]["ratio_to_keyword_only"], "x"),
        ),
        (
            "  vector side alone (sign pass, int8 re-score, short list read from SQLite), p50",
            fmt(vector["p50_ms"], " ms"),
            f"exact float32 scan {fmt(result['exact_scan']['p50_ms'], ' ms')}",
            fmt(vector["ratio_to_exact_scan"], "x"),
        ),
        (
            "  recall of its top 1,000 / top 100 against the exact scan (mean; worst)",
            f"{hit['top_1000_mean']:.1%} / {hit['top_100_mean']:.1%}",
            f"worst {hit['top_1000_worst']:.1%} / {hit['top_100_worst']:.1%}",
            "-",
        ),
        (
            f"  peak memory (VmHWM) at {n:,}; codes {fmt(result['codes_mib'], ' MiB')}",
            fmt(memory["VmHWM"], " MiB"),
            f"exact scan's process {fmt(result['exact_scan_memory_mib']['VmHWM'], ' MiB')}",
            fmt(memory["VmHWM"] / result["exact_scan_memory_mib"]["VmHWM"], "x"),
        ),
        (
            f"  open {n:,}: stream the vectors into codes",
            fmt(result["open_s"], " s"),
            "-",
            "-",
        ),
    ]
