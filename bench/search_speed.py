"""Search beyond the query embedding, in an English and in a mixed-language library (issue 30).

    python -m bench --sections search_parts [--sizes 100000]
    python -m bench.search_speed PATH [MIXED_PATH] [--queries 200]

For each library, in a fresh process: every query is searched once cold (its vectors are
embedded: what a new query costs) and once more warm (the index's query cache holds its
vectors: everything *beyond* embedding the query, the part the 15 ms target is about). The
same queries keyword-only (no index attached) are the same-run baseline. Beside them, each
model's query embedding alone, p50: the library's English model, the other English model
when its weights are installed (MiniLM / all-mpnet-base-v2), and multilingual-e5.
The load average is recorded at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import corpus
from bench.common import percentile, ratio, summary_ms


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _search_once(library: Any, text: str, wall: list[float], cpu: list[float]) -> None:
    from screvi_mcp.local.search import engine

    started, started_cpu = time.perf_counter(), time.process_time()
    engine.search(library, engine.SearchQuery(text, per_page=20))
    wall.append(time.perf_counter() - started)
    cpu.append(time.process_time() - started_cpu)


def _summary(wall: list[float], cpu: list[float]) -> dict[str, float]:
    """Wall-clock p50/p99 and the process's CPU time p50 (both cores' threads): on a shared
    machine the CPU time moves less with the load."""
    return {**summary_ms(wall), "cpu_p50_ms": summary_ms(cpu)["p50_ms"]}


def library_figures(path: Path, queries: list[str], foreign: list[str]) -> dict[str, Any]:
    """Cold, warm and keyword-only searches on one library, in this process.

    The keyword-only baseline is a second handle on the same file with no index attached;
    warm and keyword-only searches alternate query by query, so a change in the machine's
    load hits both."""
    from screvi_mcp.local.search import attach, multilingual
    from screvi_mcp.local.storage.library import Library

    out: dict[str, Any] = {"load_average_at_start": _load()}
    library, bare = Library.open(path), Library.open(path)
    try:
        index = attach.attach_semantic_index(library, backfill="never")
        if index is None:
            raise RuntimeError("the 'local' extra is needed for this benchmark")
        samples: dict[str, tuple[list[float], list[float]]] = {
            name: ([], [])
            for name in ("cold", "warm", "keyword_only", "foreign_cold", "foreign_warm")
        }
        for text in corpus.queries(5, seed=98):
            _search_once(library, text, [], [])
            _search_once(bare, text, [], [])
        for text in queries:
            _search_once(library, text, *samples["cold"])
        for text in queries:
            _search_once(library, text, *samples["warm"])
            _search_once(bare, text, *samples["keyword_only"])
        out.update(
            highlights=len(index.matrix),
            dimensions=index.matrix.dimensions,
            english_model=index.embedder.model_id,
        )
        for name in ("cold", "warm", "keyword_only"):
            out[name] = _summary(*samples[name])
        out["warm"]["ratio_to_keyword_only"] = ratio(
            out["warm"]["p50_ms"], out["keyword_only"]["p50_ms"]
        )
        companion = multilingual.index_for(library)
        if companion is not None and companion.has_non_english():
            out["non_english_highlights"] = len(companion.split.foreign)
            for name in ("foreign_cold", "foreign_warm"):
                for text in foreign:
                    _search_once(library, text, *samples[name])
                out[name] = _summary(*samples[name])
        out["query_embedding_p50_ms"] = _embedding_times(index, companion, len(queries))
        attach.detach_semantic_index(library)
    finally:
        library.close()
        bare.close()
    out["load_average_at_end"] = _load()
    return out


def _embedding_times(index: Any, companion: Any, count: int) -> dict[str, float]:
    """Each model's query embedding alone, p50 over fresh queries (none cached)."""
    from screvi_mcp.local.search import multilingual_model

    texts = corpus.queries(min(count, 60), seed=616)
    embedders: dict[str, Any] = {index.embedder.model_id: index.embedder.embed}
    other = _other_english(index.embedder.model_id)
    if other is not None:
        embedders[other.model_id] = other.embed
    if companion is not None:
        embedders["multilingual-e5"] = lambda batch: companion._embed_query(batch[0])
    elif multilingual_model.installed():
        shared = multilingual_model.shared_embedder()
        embedders["multilingual-e5"] = lambda batch: shared.embed_query(batch[0])
    out: dict[str, float] = {}
    for name, embed in embedders.items():
        embed(["warm up"])
        seconds = []
        for text in texts:
            started = time.perf_counter()
            embed([text])
            seconds.append(time.perf_counter() - started)
        out[name] = round(percentile(seconds, 50) * 1000, 3)
    return out


def _other_english(model_id: str) -> Any:
    """The English model the library does not use, where installed (None otherwise)."""
    from screvi_mcp.local.search import embedder, mpnet

    try:
        if model_id == embedder.MINILM_MODEL_ID:
            if not mpnet.weights_installed():
                return None
            return embedder.load_english_embedder(mpnet.MPNET)
        return embedder.load_english_embedder(mpnet.MINILM)
    except Exception:  # a model that cannot load here is simply not measured
        return None


def worker(paths: list[Path], count: int) -> dict[str, Any]:
    from bench import mixed_language

    queries = corpus.queries(count, seed=515)
    foreign = mixed_language.foreign_queries(max(count // 4, 4))
    out = {"english": library_figures(paths[0], queries, foreign)}
    if len(paths) > 1:
        out["mixed"] = library_figures(paths[1], queries, foreign)
    return out


def mixed_library(english: Path, donor: Path, foreign_count: int) -> Path:
    """`english` plus `foreign_count` French and German highlights, cached beside it.

    Embedding a 100k library with multilingual-e5 takes hours here (a few texts a second on
    a loaded machine), so the vectors are placed, not computed: the non-English highlights
    repeat the texts `donor` (the `mixed` section's library) holds e5 vectors for, with
    those vectors (the English model's are computed); the English highlights get a random unit
    vector as a stand-in for e5's (near 0 against any query, so below every cut). An
    English query reads only the non-English e5 vectors (multilingual.py), so its figures
    are what real vectors give; a French query scans all of them at the real cost, but
    finds no English highlight here.
    """
    from bench import libraries

    path = english.with_name(english.name.replace("library-", "library-mixed-placed-"))
    meta = path.with_suffix(".json")
    # Reused only over the same English library and model (a cached copy of another
    # model's vectors would not even have the width of this one's).
    made_from = {"foreign": foreign_count, "english": libraries.recorded_model(english)}
    if path.exists() and meta.exists() and json.loads(meta.read_text()) == made_from:
        return path
    libraries.copy_library(english, path)
    _place_foreign(path, donor, foreign_count)
    meta.write_text(json.dumps(made_from))
    return path


def _place_foreign(path: Path, donor: Path, count: int) -> None:
    import sqlite3

    from screvi_mcp.local.api.bodies import HighlightCreate
    from screvi_mcp.local.search import embedding_rows
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.vector_tables import MULTILINGUAL_TABLES
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights

    source = sqlite3.connect(donor)
    rows = source.execute(
        "SELECT h.content, m.vector, m.model FROM multilingual_embeddings m"
        " JOIN highlights h ON h.seq = m.seq WHERE m.english = 0 AND h.note IS NULL"
    ).fetchall()
    source.close()
    # The English model's vectors of these few texts are computed here: the donor may
    # have been embedded by another English model.
    english_vectors = load_embedder().embed([row[0] for row in rows])
    rows = [
        (*row[:2], vector.astype("<f4").tobytes(), row[2])
        for row, vector in zip(rows, english_vectors, strict=True)
    ]
    e5_model, width = rows[0][3], len(rows[0][1]) // 4
    rng = np.random.default_rng(3)
    library = Library.open(path)
    try:
        conn = library.connection()
        english_model = library.get_setting(embedding_rows.MODEL_SETTING)
        for start in range(0, count, 100):
            batch = [rows[i % len(rows)] for i in range(start, min(start + 100, count))]
            highlights.create_many(
                library, [HighlightCreate(content=row[0]) for row in batch], bulk=True
            )
        by_text = {row[0]: row for row in rows}
        seqs = [int(r[0]) for r in conn.execute("SELECT seq FROM highlights ORDER BY seq")]
        for chunk in embedding_rows.chunks(seqs, 5000):
            texts = embedding_rows.live_texts(conn, chunk)
            foreign = [t for t in texts if t.text in by_text]
            english = [t for t in texts if t.text not in by_text]
            stand_ins = rng.standard_normal((len(english), width)).astype(np.float32)
            stand_ins /= np.linalg.norm(stand_ins, axis=1, keepdims=True)
            with library.write() as write:
                write.executemany(
                    "INSERT OR REPLACE INTO highlight_embeddings(seq, model, text_hash, vector)"
                    " VALUES (?, ?, ?, ?)",
                    [(t.seq, english_model, t.hash, by_text[t.text][2]) for t in foreign],
                )
                write.executemany(
                    f"INSERT OR REPLACE INTO {MULTILINGUAL_TABLES.vectors}"
                    "(seq, model, text_hash, vector, english) VALUES (?, ?, ?, ?, ?)",
                    [(t.seq, e5_model, t.hash, by_text[t.text][1], 0) for t in foreign]
                    + [
                        (t.seq, e5_model, t.hash, v.astype("<f4").tobytes(), 1)
                        for t, v in zip(english, stand_ins, strict=True)
                    ],
                )
        with library.write() as write:
            for table in ("embedding_queue", MULTILINGUAL_TABLES.queue):
                write.execute(f"DELETE FROM {table}")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        library.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_speed", description=__doc__)
    parser.add_argument("paths", type=Path, nargs="+", help="English library [mixed library]")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    print(json.dumps(worker(args.paths, args.queries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def run(size: int, english: Path, donor: Path, count: int, tiny: bool = False) -> dict[str, Any]:
    """The section: `english` (the run's largest library) and its mixed-language copy with
    a tenth of it in French and German (e5 vectors placed from `donor`, see
    `mixed_library`), both measured in one fresh process."""
    from bench.common import log, run_worker

    mixed = mixed_library(english, donor, max(size // 10, 20))
    log(f"search beyond the query embedding at {size}: English and mixed ({count} queries)")
    args = ["-m", "bench.search_speed", str(english), str(mixed), "--queries", str(count)]
    out: dict[str, Any] = run_worker(args)
    out["size"] = size
    if tiny:
        for stale in (mixed, mixed.with_suffix(".json")):
            stale.unlink(missing_ok=True)
    return out


def table_rows(result: dict[str, Any], fmt: Any) -> list[tuple[str, str, str, str]]:
    """The section's rows for the table (`fmt` is the runner's number format)."""
    rows: list[tuple[str, str, str, str]] = []
    for name, label in (("english", "English"), ("mixed", "mixed-language")):
        part = result.get(name)
        if not part:
            continue
        n = part["highlights"]
        extra = (
            f", {part['non_english_highlights']:,} French/German"
            if "non_english_highlights" in part
            else ""
        )
        warm, bare = part["warm"], part["keyword_only"]
        rows.append(
            (
                f"Search beyond the query embedding, {label} library of {n:,}{extra}"
                f" ({part['dimensions']}-d), p50 / p99",
                f"{fmt(warm['p50_ms'])} / {fmt(warm['p99_ms'])} ms",
                f"keyword-only {fmt(bare['p50_ms'], ' ms')}",
                fmt(warm["ratio_to_keyword_only"], "x"),
            )
        )
        rows.append(
            (
                "  the same queries new (embedded), p50; CPU p50 beyond embedding",
                fmt(part["cold"]["p50_ms"], " ms"),
                f"CPU {fmt(warm['cpu_p50_ms'], ' ms')}",
                "-",
            )
        )
        if "foreign_warm" in part:
            rows.append(
                (
                    "  French/German queries beyond embedding / new, p50",
                    f"{fmt(part['foreign_warm']['p50_ms'])} / "
                    f"{fmt(part['foreign_cold']['p50_ms'])} ms",
                    f"keyword-only {fmt(bare['p50_ms'], ' ms')}",
                    "-",
                )
            )
        embedding = part["query_embedding_p50_ms"]
        rows.append(
            (
                "  query embedding alone, p50: " + ", ".join(embedding),
                " / ".join(fmt(value) for value in embedding.values()) + " ms",
                "-",
                "-",
            )
        )
    return rows
