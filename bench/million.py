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


def open_worker(path: Path, threshold: int | None) -> dict[str, Any]:
    """The baseline opening: every vector streamed from SQLite into codes (the codes file
    ignored), which then saves the codes file the compact worker opens from."""
    from screvi_mcp.local.search import attach
    from screvi_mcp.local.search import index as index_module
    from screvi_mcp.local.storage.library import Library

    if threshold is not None:
        index_module.COMPACT_FROM_ROWS = threshold
    index_module.SemanticIndex._read_codes = lambda *args: None  # type: ignore[method-assign]
    started, cpu = time.perf_counter(), time.process_time()
    library = Library.open(path)
    try:
        if attach.attach_semantic_index(library, backfill="never") is None:
            raise RuntimeError("no semantic index")
        out = _since(started, cpu)
        out["memory_mib"] = _memory()
    finally:
        attach.detach_semantic_index(library)
        library.close()
    return out


def _since(started: float, cpu: float) -> dict[str, Any]:
    return {
        "s": round(time.perf_counter() - started, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
    }


def compact_worker(path: Path, count: int, threshold: int | None) -> dict[str, Any]:
    """The compact index in this process: memory, opening, searches, its top 1,000s (and
    those of the short list before this pass, 2 x limit + 256, for the recall baseline)."""
    from screvi_mcp.local.search import attach
    from screvi_mcp.local.search import index as index_module
    from screvi_mcp.local.search.compact_matrix import CompactMatrix
    from screvi_mcp.local.storage.library import Library

    if threshold is not None:  # the tiny run's library is far below the real threshold
        index_module.COMPACT_FROM_ROWS = threshold
    out: dict[str, Any] = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    out["memory_before_open_mib"] = _memory()
    started, cpu = time.perf_counter(), time.process_time()
    library = Library.open(path)
    index = attach.attach_semantic_index(library, backfill="never")
    if index is None or not isinstance(index.matrix, CompactMatrix):
        raise RuntimeError("the library did not open compactly")
    out["open"] = _since(started, cpu)
    out["open_s"] = out["open"]["s"]
    out["memory_after_open_mib"] = _memory()
    out["codes_mib"] = round(index.matrix.resident_bytes / 2**20, 1)
    out["highlights"] = len(index.matrix)
    out["dimensions"] = index.matrix.dimensions
    texts = _cached_queries(index, count)
    bare = Library.open(path)
    try:
        out.update(_searches(library, bare, texts))
        out.update(_vector_side(index, texts))
    finally:
        attach.detach_semantic_index(library)
        library.close()
        bare.close()
    out["hybrid"]["ratio_to_keyword_only"] = ratio(
        out["hybrid"]["p50_ms"], out["keyword_only"]["p50_ms"]
    )
    out["memory_at_end_mib"] = _memory()
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def _searches(library: Any, bare: Any, texts: list[str]) -> dict[str, Any]:
    """Whole searches, hybrid and keyword-only (a second handle, no index) alternating
    query by query: wall time and the process's CPU time (both sides' threads)."""
    from screvi_mcp.local.search import engine

    for text in texts[:3]:
        engine.search(library, engine.SearchQuery(text))
        engine.search(bare, engine.SearchQuery(text))
    wall: dict[str, list[float]] = {"hybrid": [], "keyword_only": []}
    cpu: dict[str, list[float]] = {"hybrid": [], "keyword_only": []}
    for text in texts:
        for name, handle in (("hybrid", library), ("keyword_only", bare)):
            started, used = time.perf_counter(), time.process_time()
            engine.search(handle, engine.SearchQuery(text, per_page=20))
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - used)
    return {name: {**summary_ms(wall[name]), "cpu": summary_ms(cpu[name])} for name in wall}


def _vector_side(index: Any, texts: list[str]) -> dict[str, Any]:
    """The vector side alone and its parts (thread CPU), and its top 1,000s now and with
    the short list of before (2 x limit + 256)."""
    from screvi_mcp.local.search import engine

    matrix = index.matrix
    floor = index.calibration.min_cosine(engine.SearchQuery("").min_relevance)
    wall, parts = [], {"sign_pass": [], "int8_rescore": [], "short_list_read": []}
    tops, before = [], []
    candidates = max(matrix.candidates_per_result * 1000, matrix.min_candidates)
    for text in texts:
        vector = index._query_cache[text]
        started = time.perf_counter()
        matrix.top(vector, floor, 1000)
        wall.append(time.perf_counter() - started)
        parts["sign_pass"].append(
            _thread_cpu(matrix._signs.nearest, vector, len(matrix), candidates)
        )
        used = time.thread_time()
        short = matrix._short_list(vector, 1000, None)
        parts["int8_rescore"].append(time.thread_time() - used - parts["sign_pass"][-1])
        parts["short_list_read"].append(_thread_cpu(matrix._fetch, short))
        tops.append([seq for seq, _ in matrix.top(vector, -1.0, 1000)])
        factor, matrix.short_list_factor = matrix.short_list_factor, 2
        before.append([seq for seq, _ in matrix.top(vector, -1.0, 1000)])
        matrix.short_list_factor = factor
    return {
        "default_floor": round(floor, 4),
        "vector_side": summary_ms(wall),
        "vector_side_cpu_parts": {name: summary_ms(samples) for name, samples in parts.items()},
        "top_1000": tops,
        "top_1000_before": before,
    }


def _thread_cpu(call: Any, *args: Any) -> float:
    used = time.thread_time()
    call(*args)
    return time.thread_time() - used


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
    """recall@k for k = 10, 100, 1,000 (of each exact top k, the share the approximate top
    k held: mean and worst query), and of each exact top 100 the share the approximate top
    1,000 held (what fusion sees)."""
    out: dict[str, float] = {}
    for k in (10, 100, 1000):
        shares = [len(set(a[:k]) & set(e[:k])) / k for a, e in zip(approximate, exact, strict=True)]
        out[f"at_{k}_mean"], out[f"at_{k}_worst"] = round(float(np.mean(shares)), 4), min(shares)
    at_100 = [len(set(a) & set(e[:100])) / 100 for a, e in zip(approximate, exact, strict=True)]
    out["top_1000_mean"], out["top_1000_worst"] = out["at_1000_mean"], out["at_1000_worst"]
    out["top_100_mean"], out["top_100_worst"] = round(float(np.mean(at_100)), 4), min(at_100)
    return out


def measure(tiny: bool = False, size: int | None = None, count: int | None = None) -> Any:
    size = size or (TINY_SIZE if tiny else FULL_SIZE)
    count = count or (5 if tiny else 40)
    directory = Path(tempfile.mkdtemp(prefix="screvi-million-")) if tiny else CACHE_DIR
    path = build(size, directory)
    threshold = ["--threshold", "0"] if tiny else []
    worker = ["-m", "bench.million", "--worker"]
    # First the baseline opening (from SQLite), which leaves the codes file the compact
    # worker then opens from.
    opened = run_worker([*worker, "open", str(path), str(count), *threshold], timeout=3600)
    compact = run_worker([*worker, "compact", str(path), str(count), *threshold], timeout=3600)
    exact = run_worker([*worker, "exact", str(path), str(count)])
    out = {key: value for key, value in compact.items() if not key.startswith("top_1000")}
    out["open_from_sqlite"] = opened
    out["open"]["ratio_to_sqlite"] = ratio(out["open"]["s"], opened["s"])
    out["exact_scan"] = exact["scan"]
    out["exact_scan_memory_mib"] = exact["memory_mib"]
    out["vector_side"]["ratio_to_exact_scan"] = ratio(
        out["vector_side"]["p50_ms"], exact["scan"]["p50_ms"]
    )
    out["recall"] = recall(compact["top_1000"], exact["top_1000"])
    out["recall_short_list_before"] = recall(compact["top_1000_before"], exact["top_1000"])
    if tiny:
        shutil.rmtree(directory, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.million", description=__doc__)
    parser.add_argument("--size", type=int)
    parser.add_argument("--queries", type=int)
    parser.add_argument("--tiny", action="store_true", help="2,000 highlights (CI)")
    parser.add_argument("--worker", choices=("open", "compact", "exact"), help=argparse.SUPPRESS)
    parser.add_argument("--threshold", type=int, help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker == "open":
        print(json.dumps(open_worker(Path(args.args[0]), args.threshold)))
    elif args.worker == "compact":
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
    memory, hybrid, keyword = result["memory_at_end_mib"], result["hybrid"], result["keyword_only"]
    hit, before = result["recall"], result["recall_short_list_before"]
    vector, parts = result["vector_side"], result["vector_side_cpu_parts"]
    opened, sqlite = result["open"], result["open_from_sqlite"]
    return [
        (
            f"Search at {n:,} ({width}-d, compact index), beyond the query embedding, p50 / p99",
            f"{fmt(hybrid['p50_ms'])} / {fmt(hybrid['p99_ms'])} ms"
            f" (CPU {fmt(hybrid['cpu']['p50_ms'], ' ms')})",
            f"keyword-only {fmt(keyword['p50_ms'])} / {fmt(keyword['p99_ms'])} ms"
            f" (CPU {fmt(keyword['cpu']['p50_ms'], ' ms')})",
            fmt(hybrid["ratio_to_keyword_only"], "x"),
        ),
        (
            "  vector side alone, p50 (thread CPU: sign pass / int8 re-score / short list read)",
            f"{fmt(vector['p50_ms'], ' ms')} ("
            + " / ".join(fmt(part["p50_ms"]) for part in parts.values())
            + " ms)",
            f"exact float32 scan {fmt(result['exact_scan']['p50_ms'], ' ms')}",
            fmt(vector["ratio_to_exact_scan"], "x"),
        ),
        (
            "  recall@10 / @100 / @1,000 against the exact scan (mean; worst @10)",
            f"{hit['at_10_mean']:.1%} / {hit['at_100_mean']:.1%} / {hit['at_1000_mean']:.1%};"
            f" {hit['at_10_worst']:.0%}",
            f"short list 2 x limit + 256: {before['at_10_mean']:.1%} / {before['at_100_mean']:.1%}"
            f" / {before['at_1000_mean']:.1%}",
            "-",
        ),
        (
            f"  peak memory (VmHWM) at {n:,}; codes {fmt(result['codes_mib'], ' MiB')}",
            fmt(memory["VmHWM"], " MiB"),
            f"exact scan's process {fmt(result['exact_scan_memory_mib']['VmHWM'], ' MiB')}",
            fmt(memory["VmHWM"] / result["exact_scan_memory_mib"]["VmHWM"], "x"),
        ),
        (
            f"  open {n:,}: codes read from the codes file (CPU)",
            f"{fmt(opened['s'], ' s')} ({fmt(opened['cpu_s'], ' s')})",
            f"streamed from SQLite {fmt(sqlite['s'], ' s')} ({fmt(sqlite['cpu_s'], ' s')})",
            fmt(opened["ratio_to_sqlite"], "x"),
        ),
    ]
