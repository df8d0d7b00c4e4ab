"""Section 4's measurements, each in a fresh process (`python -m bench.library_worker ...`).

A fresh process per size makes the open time a cold one and the peak memory that size's own:
VmHWM from /proc/self/status, the process's resident high-water mark, read after the
searches (so it covers the model, the vector matrix and SQLite's caches).

- `search PATH N`: open the library, attach the semantic index, run N distinct queries with
  the full engine (query embedding included, no query-cache hits), then the same N queries
  keyword-only (index detached); the same engine with the int8 copy turned on (from
  20,000 rows), and with the exact float32 scan (no sign-code first pass), is compared with
  the default scan, idle and under the CPU load.
- `mixed MIXED ENGLISH N`: search in a mixed-language library against its English-only
  original (`mixed_language.py`).
- `ingest PATH N`: bulk create N highlights in requests of 100 (the API's maximum):
  keyword-only, then embedded inline as before the queue (the baseline), then answered at
  commit with the queue embedding behind (see `ingest`).

The last stdout line is the JSON result.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import corpus
from bench.common import percentile, summary_ms

BULK_REQUEST = 100  # the API's maximum per bulk create (local/storage/store/highlights.MAX_BULK)
DELAY_SAMPLES = 20  # single creates timed until searchable (a tenth of the count if fewer)


def _rss_mib() -> float:
    """This process's peak resident set since exec: VmHWM.

    Not `ru_maxrss`: Linux carries the parent's high-water mark across fork and exec into
    it, so a child of a big parent would report the parent's peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


LOAD_PROCESSES = os.cpu_count() or 1


@contextmanager
def cpu_load() -> Iterator[None]:
    """The same CPU load each run: one busy-looping Python process per core."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True:\n    pass"])
        for _ in range(LOAD_PROCESSES)
    ]
    time.sleep(0.5)  # let them get scheduled
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


# From this many rows the benchmark turns the int8 copy on to compare it with the default
# scan (the library turns it on only from vectors.INT8_FROM_ROWS rows).
BENCH_INT8_FROM_ROWS = 20_000


@contextmanager
def exact_scan(matrix: Any) -> Iterator[None]:
    """The float32 scan of every row (no sign-code first pass): the exact baseline."""
    rows = matrix.sign_from_rows
    matrix.set_sign_from_rows(10**12)
    try:
        yield
    finally:
        matrix.set_sign_from_rows(rows)


@contextmanager
def int8_scan_on(matrix: Any) -> Iterator[None]:
    """The scan through the int8 copy with a float32 re-score (the variant measured)."""
    rows = matrix.int8_from_rows
    matrix.set_int8_from_rows(BENCH_INT8_FROM_ROWS)
    try:
        yield
    finally:
        matrix.set_int8_from_rows(rows)


def _timed(library: Any, queries: list[str], *, sequential: bool) -> list[float]:
    """Hybrid search times; `sequential` runs the keyword side after the semantic one, as
    before the sides ran concurrently (the baseline)."""
    return [_timed_once(library, text, sequential=sequential)[0] for text in queries]


def _timed_once(library: Any, text: str, *, sequential: bool) -> tuple[float, int]:
    """Seconds of one hybrid search, and how many hits its page held."""
    from concurrent.futures import Future

    from screvi_mcp.local.search import concurrent_sides, engine

    original = concurrent_sides.submit

    def inline(work: Any) -> Future[Any]:
        done: Future[Any] = Future()
        done.set_result(work())
        return done

    if sequential:
        concurrent_sides.submit = inline  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        page, _total = engine.search(library, engine.SearchQuery(text, per_page=20))
        return time.perf_counter() - t0, len(page)
    finally:
        concurrent_sides.submit = original  # type: ignore[assignment]


def _interleaved(
    library: Any, concurrent: list[str], sequential: list[str]
) -> tuple[list[float], list[float], list[int]]:
    """The default (sides concurrent) and the sequential baseline, alternating query by
    query (which goes first alternates too), so that whatever else the machine does in
    those seconds weighs on both: measured one pass after the other, the first 100k pass
    of an idle run read 101.7 ms against the sequential pass's 51.1 ms right after it, and
    the same code 27-35 ms in a probe minutes later. Also the concurrent searches' hits."""
    seconds: tuple[list[float], list[float]] = ([], [])
    hits: list[int] = []
    for i, (first, second) in enumerate(zip(concurrent, sequential, strict=True)):
        order = ((0, first), (1, second)) if i % 2 == 0 else ((1, second), (0, first))
        for which, text in order:
            took, found = _timed_once(library, text, sequential=which == 1)
            seconds[which].append(took)
            if which == 0:
                hits.append(found)
    return (*seconds, hits)


def flush_to_disk(path: Path) -> float:
    """Seconds to write the library's dirty pages to disk before anything is timed.

    The runner may have built the library seconds earlier (hundreds of MB at 100k): the
    kernel then writes them back while the first pass runs. A user's library was written
    long before their search."""
    started = time.perf_counter()
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return time.perf_counter() - started


def search(path: Path, count: int) -> dict[str, Any]:
    import numpy  # noqa: F401  # imported before the baseline reading: not the library's cost

    from screvi_mcp.local.search import attach, candidates, engine
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.filters import Filters
    from screvi_mcp.local.search.keyword import keyword_ranking
    from screvi_mcp.local.storage.library import Library

    rss_imports = _rss_mib()
    flush_seconds = flush_to_disk(path)
    started = time.perf_counter()
    library = Library.open(path)
    open_seconds = time.perf_counter() - started
    started = time.perf_counter()
    load_embedder()
    model_seconds = time.perf_counter() - started
    started = time.perf_counter()
    index = attach.attach_semantic_index(library, backfill="never")
    vectors_seconds = time.perf_counter() - started
    if index is None:
        raise RuntimeError("no semantic index: is the 'local' extra installed?")
    vectors = len(index.matrix)

    warm = corpus.queries(10, seed=99)
    queries = corpus.queries(count)
    for text in warm:
        engine.search(library, engine.SearchQuery(text))
    # The query cache would make repeats nearly free: each variant below gets fresh texts.
    variant_queries = corpus.queries(7 * count, seed=4242)
    hybrid, sequential_idle, hits = _interleaved(library, queries, variant_queries[:count])
    int8_from = index.matrix.int8_from_rows
    signs_used = index.matrix.scans_signs
    with int8_scan_on(index.matrix):
        int8_used = index.matrix.scans_int8
        int8_idle = _timed(library, variant_queries[3 * count : 4 * count], sequential=False)
    with exact_scan(index.matrix):
        exact_idle = _timed(library, variant_queries[5 * count : 6 * count], sequential=False)
    with cpu_load():
        loaded = _timed(library, variant_queries[count : 2 * count], sequential=False)
        sequential_loaded = _timed(library, variant_queries[2 * count : 3 * count], sequential=True)
        with int8_scan_on(index.matrix):
            int8_loaded = _timed(library, variant_queries[4 * count : 5 * count], sequential=False)
        with exact_scan(index.matrix):
            exact_loaded = _timed(library, variant_queries[6 * count : 7 * count], sequential=False)

    # Where the time goes: each part of a hybrid search on its own.
    embed: list[float] = []
    scan: list[float] = []
    scan_exact: list[float] = []
    scan_int8: list[float] = []
    keyword_side: list[float] = []
    same_top = 0
    same_top_100 = 0
    overlaps: list[float] = []
    conn = library.connection()
    part_queries = queries[: min(len(queries), 100)]
    limit = candidates.CANDIDATES_PER_SIDE
    for text in part_queries:
        t0 = time.perf_counter()
        vector = index.embedder.embed([text])[0]
        t1 = time.perf_counter()
        got = index.matrix.top(vector, 0.0, limit)
        t2 = time.perf_counter()
        keyword_ranking(conn, text, Filters(), limit)
        t3 = time.perf_counter()
        with int8_scan_on(index.matrix), exact_scan(index.matrix):
            t4 = time.perf_counter()
            with_int8 = index.matrix.top(vector, 0.0, limit)
            t5 = time.perf_counter()
        with exact_scan(index.matrix):
            t6 = time.perf_counter()
            exact = index.matrix.top(vector, 0.0, limit)
            t7 = time.perf_counter()
        embed.append(t1 - t0)
        scan.append(t2 - t1)
        keyword_side.append(t3 - t2)
        scan_int8.append(t5 - t4)
        scan_exact.append(t7 - t6)
        exact_seqs = [seq for seq, _ in exact]
        same_top += [seq for seq, _ in with_int8] == exact_seqs
        same_top_100 += [seq for seq, _ in got[:100]] == exact_seqs[:100]
        overlaps.append(len({seq for seq, _ in got} & set(exact_seqs)) / max(len(exact), 1))
    rss_peak = _rss_mib()

    attach.detach_semantic_index(library)
    keyword_only: list[float] = []
    for text in queries:
        t0 = time.perf_counter()
        engine.search(library, engine.SearchQuery(text, per_page=20))
        keyword_only.append(time.perf_counter() - t0)
    library.close()
    return {
        "vectors": vectors,
        "open": {
            "flush_to_disk_ms": round(flush_seconds * 1000, 1),
            "library_open_ms": round(open_seconds * 1000, 1),
            "model_load_ms": round(model_seconds * 1000, 1),
            "vectors_load_ms": round(vectors_seconds * 1000, 1),
            "total_ms": round((open_seconds + model_seconds + vectors_seconds) * 1000, 1),
        },
        "search_hybrid": summary_ms(hybrid),
        "search_hybrid_sequential": summary_ms(sequential_idle),
        "search_hybrid_under_load": summary_ms(loaded),
        "search_hybrid_sequential_under_load": summary_ms(sequential_loaded),
        "search_hybrid_int8": summary_ms(int8_idle),
        "search_hybrid_int8_under_load": summary_ms(int8_loaded),
        "search_hybrid_exact_scan": summary_ms(exact_idle),
        "search_hybrid_exact_scan_under_load": summary_ms(exact_loaded),
        "int8_scan": {
            "library_from_rows": int8_from,
            "used_by_default": index.matrix.scans_int8,
            "used_when_on": int8_used,
            "top_1000_same_as_exact": f"{same_top}/{len(part_queries)}",
        },
        "sign_scan": {
            "used_by_default": signs_used,
            "top_100_same_as_exact": f"{same_top_100}/{len(part_queries)}",
            "top_1000_overlap_with_exact_mean": round(sum(overlaps) / len(overlaps), 4),
            "top_1000_overlap_with_exact_min": round(min(overlaps), 4),
        },
        "load": f"{LOAD_PROCESSES} busy-looping Python processes (one per core)",
        "search_keyword_only": summary_ms(keyword_only),
        "mean_hits": round(sum(hits) / len(hits), 1),
        "parts_p50_ms": {
            "query_embedding": round(percentile(embed, 50) * 1000, 3),
            "vector_scan": round(percentile(scan, 50) * 1000, 3),
            "vector_scan_int8": round(percentile(scan_int8, 50) * 1000, 3),
            "vector_scan_exact": round(percentile(scan_exact, 50) * 1000, 3),
            "keyword_ranking": round(percentile(keyword_side, 50) * 1000, 3),
        },
        "memory": {
            "method": "VmHWM (peak RSS) of a fresh process after open and all searches",
            "peak_rss_mib": rss_peak,
            "after_imports_rss_mib": rss_imports,
        },
    }


def ingest(path: Path, count: int) -> dict[str, Any]:
    """Bulk creates with embeddings: acknowledged rate, queue throughput, delay to meaning.

    Three passes over the same texts, in one process, one after another:
    - keyword-only: no index attached (the floor a write can answer at);
    - before (the baseline): what the library did until the queue landed, reproduced with
      the same model: each request embeds its highlights inline after the commit, in fixed
      batches of 32 sorted by length, and answers only then;
    - queue: requests answer at commit; the index's worker embeds in the background in
      length-budgeted batches. Acknowledged rate = highlights / time until the last answer;
      queue throughput = highlights / time from the first request until the queue is empty.
    Inline and queue run twice each, in the order A B B A, and their times are averaged.
    Then the delay until a single new highlight is found by meaning, on an idle queue.
    """
    from screvi_mcp.local.api.bodies import HighlightCreate
    from screvi_mcp.local.search import attach
    from screvi_mcp.local.search import embedder as embedder_module
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.embedding_worker import EmbeddingWorker
    from screvi_mcp.local.storage import db
    from screvi_mcp.local.storage.checkpointer import Checkpointer
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights

    class InCommitCheckpoints(Checkpointer):
        """No background thread: SQLite checkpoints in the commit, as before issue 17."""

        def after_commit(self, conn: Any) -> None:
            pass

    library = Library.open(path)
    source_ids = [
        str(row[0])
        for row in library.connection().execute(
            "SELECT id FROM sources WHERE deleted_at IS NULL AND type != 'article' LIMIT 500"
        )
    ]

    def items(seed: int) -> list[HighlightCreate]:
        specs = corpus.highlights(count, len(source_ids), seed=seed)
        return [
            HighlightCreate(
                content=spec.content,
                note=spec.note,
                favorite=spec.favorite,
                source_id=None if spec.source_index is None else source_ids[spec.source_index],
                tags=spec.tags or None,
                location=spec.location,
            )
            for spec in specs
        ]

    def seqs_of(created: list[dict[str, Any]]) -> list[int]:
        ids = json.dumps([item["id"] for item in created])
        rows = library.connection().execute(
            "SELECT seq FROM highlights WHERE id IN (SELECT value FROM json_each(?))", (ids,)
        )
        return [int(row[0]) for row in rows]

    def keyword_pass(texts: list[HighlightCreate], *, in_commit_checkpoint: bool) -> float:
        """Seconds to bulk create `texts` with no index attached, from an emptied WAL.

        `in_commit_checkpoint` is SQLite's default, what the library did before issue 17's
        checkpoint thread: the commit that takes the WAL past 1,000 pages checkpoints it."""
        conn = library.connection()
        checkpointer = library.checkpointer
        with checkpointer._pass_lock:  # a background pass still running would refuse it
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if in_commit_checkpoint:
            conn.execute("PRAGMA wal_autocheckpoint = 1000")
            library.checkpointer = InCommitCheckpoints(library)
        started = time.perf_counter()
        for start in range(0, count, BULK_REQUEST):
            highlights.create_many(library, texts[start : start + BULK_REQUEST], bulk=True)
        seconds = time.perf_counter() - started
        library.checkpointer = checkpointer
        conn.execute(f"PRAGMA wal_autocheckpoint = {db.WAL_HARD_PAGES}")
        return seconds

    # A warm-up request (the first pass would pay for reading the file into the cache), then
    # the two ways in the order A B B A, each from an emptied WAL, so drift in the machine's
    # load and the library's growth weigh on both alike.
    warm_up = items(5005)[:BULK_REQUEST]
    highlights.create_many(library, warm_up, bulk=True)
    keyword_seconds = keyword_pass(items(1001), in_commit_checkpoint=False)
    in_commit_seconds = keyword_pass(items(3003), in_commit_checkpoint=True)
    in_commit_seconds += keyword_pass(items(3004), in_commit_checkpoint=True)
    keyword_seconds += keyword_pass(items(1002), in_commit_checkpoint=False)
    keyword_seconds, in_commit_seconds = keyword_seconds / 2, in_commit_seconds / 2
    # Whatever the keyword-only pass queued is not what is measured below.
    with library.write() as conn:
        conn.execute("DELETE FROM embedding_queue")

    load_embedder()  # the model's load is start-up cost, not ingest cost
    index = attach.attach_semantic_index(library, backfill="never")
    if index is None:
        raise RuntimeError("no semantic index: is the 'local' extra installed?")

    def inline_pass(texts: list[HighlightCreate]) -> float:
        """Before: embed inline after each request's commit, fixed batches of 32."""
        index.worker.stop()
        budget = (embedder_module.BATCH_TOKENS, embedder_module.BATCH_SIZE)
        embedder_module.BATCH_TOKENS, embedder_module.BATCH_SIZE = 10**9, 32
        started = time.perf_counter()
        for start in range(0, count, BULK_REQUEST):
            created = highlights.create_many(
                library, texts[start : start + BULK_REQUEST], bulk=True
            )
            index.embed(seqs_of(created))
        seconds = time.perf_counter() - started
        embedder_module.BATCH_TOKENS, embedder_module.BATCH_SIZE = budget
        with library.write() as conn:
            conn.execute("DELETE FROM embedding_queue")
        return seconds

    def queue_pass(texts: list[HighlightCreate]) -> tuple[float, float, int]:
        """Queue: answer at commit, embed in the background; (acknowledged, drained) seconds
        and how many vectors it added."""
        index.worker.stop()  # the previous pass's (a stopped worker does not start again)
        index.worker = EmbeddingWorker(index)
        index.worker.start()
        vectors_before = len(index.matrix)
        started = time.perf_counter()
        for start in range(0, count, BULK_REQUEST):
            highlights.create_many(library, texts[start : start + BULK_REQUEST], bulk=True)
        acknowledged = time.perf_counter() - started
        if not index.wait_until_embedded(3600):
            raise RuntimeError("the embedding queue did not drain")
        return acknowledged, time.perf_counter() - started, len(index.matrix) - vectors_before

    # The two ways in the order A B B A, as for the keyword-only floor above: one pass of
    # each let a change in the machine's load between them swing the ratio by 0.1-0.2.
    before_seconds = inline_pass(items(2002))
    first = queue_pass(items(2003))
    second = queue_pass(items(2004))
    before_seconds = (before_seconds + inline_pass(items(2005))) / 2
    acknowledged_seconds = (first[0] + second[0]) / 2
    drained_seconds = (first[1] + second[1]) / 2
    embedded = min(first[2], second[2])
    index.worker.stop()
    index.worker = EmbeddingWorker(index)  # the delays below need a running worker
    index.worker.start()

    # Delay until findable by meaning: one create on an idle queue, until its vector is in.
    delays: list[float] = []
    for text in corpus.queries(min(DELAY_SAMPLES, max(1, count // 10)), seed=77):
        t0 = time.perf_counter()
        created = highlights.create_many(library, [HighlightCreate(content=text)], bulk=False)
        (seq,) = seqs_of(created)
        while seq not in index.matrix:
            time.sleep(0.001)
        delays.append(time.perf_counter() - t0)
    library.close()
    return {
        "count": count,
        "request_size": BULK_REQUEST,
        "keyword_only_per_s": round(count / keyword_seconds, 1),
        "keyword_only_in_commit_checkpoint_per_s": round(count / in_commit_seconds, 1),
        "before_inline_per_s": round(count / before_seconds, 1),
        "acknowledged_per_s": round(count / acknowledged_seconds, 1),
        "queue_throughput_per_s": round(count / drained_seconds, 1),
        "drained_after_last_ack_s": round(drained_seconds - acknowledged_seconds, 2),
        "embedded": embedded,
        "delay_to_meaning": summary_ms(delays),
        # Kept under the old name, so older results and the README compare.
        "with_embeddings_per_s": round(count / acknowledged_seconds, 1),
    }


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.library_worker",
        description="One library measurement in this process; prints the results as JSON.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, what in (("search", "queries to time"), ("ingest", "highlights to write")):
        sub = commands.add_parser(name, help=f"{name} on a library ({what})")
        sub.add_argument("path", type=Path)
        sub.add_argument("count", type=int, help=what)
    mixed = commands.add_parser(
        "mixed", help="a mixed-language library, then its English-only original"
    )
    mixed.add_argument("path", type=Path)
    mixed.add_argument("english_path", type=Path)
    mixed.add_argument("count", type=int)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse(argv)
    if args.command == "mixed":  # mixed-language library, then its English-only original
        from bench import mixed_language

        result = mixed_language.measure(args.path, args.english_path, args.count)
    elif args.command == "search":
        result = search(args.path, args.count)
    else:
        result = ingest(args.path, args.count)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
