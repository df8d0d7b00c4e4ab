"""What the verify judge costs: `verify=true` on 20 matches, against a plain search measured
in the same run, for a new query and for a repeated one.

    python -m bench.verify_cost [--size 2000] [--queries 40] [--tiny]

On a generated library (bench/corpus.py, cached in bench/.cache), for each query:

1. a plain search at the defaults (the baseline; its query vector is cached by a warm-up);
2. the same search with `verify=true` and `min_relevance=0`, so that a full 20 semantic
   matches are judged, **new**: the judge's token cache emptied first, so the query and all
   20 matches run through the token model (judge_tokens.py);
3. the same again, **repeated**: everything is in the token cache;
4. the judge alone over the query's best 20 matches, new (cache emptied) and repeated;
5. the before-figure, where the library's model is not MiniLM: the same judge reading that
   model's own token vectors, uncached (how verify ran before judge_tokens.py).

Wall time is inflated by whatever else runs on the machine; CPU time (this process) is given
beside it, and the load average at start is recorded. Writes `bench/results/verify.json`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import corpus, libraries
from bench.common import CACHE_DIR, RESULTS_DIR, log, machine, ratio, summary_ms

# Natural questions, as a reader asks them (the corpus's own queries share words with it).
READER_QUESTIONS = (
    "how can I fall asleep more easily",
    "saving money for unexpected expenses",
    "why do habits stick",
    "what makes a good teacher",
    "dealing with grief after a loss",
    "how to stop putting things off",
    "finding meaning in ordinary work",
    "keeping food fresh without a fridge",
    "learning to be patient with children",
    "why cities feel lonely",
    "getting over nerves before speaking",
    "what does courage look like day to day",
    "living simply",
    "things outside my control",
    "how memory fades with age",
    "the cost of always being busy",
)


def _timed(action: Callable[[], object], wall: list[float], cpu: list[float]) -> None:
    started, started_cpu = time.perf_counter(), time.process_time()
    action()
    wall.append(time.perf_counter() - started)
    cpu.append(time.process_time() - started_cpu)


Samples = dict[str, tuple[list[float], list[float]]]


def measure(
    path: Path, query_count: int, reader_count: int = len(READER_QUESTIONS)
) -> dict[str, Any]:
    """`query_count` corpus queries and the first `reader_count` reader questions (the
    tiny run's one of each runs every step once: each query judges 20 matches twice)."""
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index
    from screvi_mcp.local.search.judge_tokens import TokenCache
    from screvi_mcp.local.storage.library import Library

    library = Library.open(path)
    index = attach_semantic_index(library, backfill="now")
    if index is None:
        raise RuntimeError("the 'local' extra is needed for this benchmark")
    names = ["search", "verify_new", "verify_repeat", "judge_new", "judge_repeat"]
    own_tokens = None
    tokens = index.verifier.tokens  # type: ignore[attr-defined]
    tokens.token_vectors(["loads the token model before the clock runs"])
    if index.embedder.model_id != tokens.embedder().model_id:
        names.append("judge_own_model_tokens")
        own_tokens = TokenCache(lambda: index.embedder)
        own_tokens.token_vectors(["loads the token model before the clock runs"])
    samples: Samples = {name: ([], []) for name in names}
    judged_counts = []
    try:
        for q in corpus.queries(query_count, seed=29) + list(READER_QUESTIONS[:reader_count]):
            judged_counts.append(_one_query(library, index, q, samples, own_tokens))
    finally:
        detach_semantic_index(library)
        library.close()
    out: dict[str, Any] = {"matches_judged_per_verify": min(judged_counts)}
    for name, (wall, cpu) in samples.items():
        out[name] = {**summary_ms(wall), "cpu_p50_ms": summary_ms(cpu)["p50_ms"]}
    base, base_cpu = out["search"]["p50_ms"], out["search"]["cpu_p50_ms"]
    for name in ("verify_new", "verify_repeat"):
        out[name]["ratio_to_search"] = ratio(out[name]["p50_ms"], base)
        out[name]["added_p50_ms"] = round(out[name]["p50_ms"] - base, 2)
        out[name]["added_cpu_p50_ms"] = round(out[name]["cpu_p50_ms"] - base_cpu, 2)
    return out


def _one_query(library: Any, index: Any, q: str, samples: Samples, own_tokens: Any) -> int:
    """Times one query's samples; returns how many matches its verify judged."""
    from screvi_mcp.local.search.engine import SearchQuery, search
    from screvi_mcp.local.search.filters import Filters
    from screvi_mcp.local.search.index import VERIFY_LIMIT
    from screvi_mcp.local.search.judge import JudgeVerifier

    conn = library.connection()
    search(library, SearchQuery(q=q))  # warm: the query vector is cached after this
    _timed(lambda: search(library, SearchQuery(q=q)), *samples["search"])
    verified = SearchQuery(q=q, min_relevance=0.0, verify=True)
    tokens = index.verifier.tokens
    tokens.clear()  # new: the query and its matches were never judged
    for name in ("verify_new", "verify_repeat"):
        _timed(lambda: search(library, verified), *samples[name])
    matches = index.semantic_ranking(conn, q, Filters(), 0.0, VERIFY_LIMIT)
    tokens.clear()
    for name in ("judge_new", "judge_repeat"):
        _timed(lambda: index.verify(conn, q, matches), *samples[name])
    if own_tokens is not None:  # before: the ranking model's own token vectors, uncached
        own_tokens.clear()
        current = index.verifier
        index.verifier = JudgeVerifier(current.weights, own_tokens)
        try:
            _timed(lambda: index.verify(conn, q, matches), *samples["judge_own_model_tokens"])
        finally:
            index.verifier = current
    return len(matches)


def table_rows(result: dict[str, Any], fmt: Any) -> list[tuple[str, str, str, str]]:
    """The section's rows for the table (`fmt` is the runner's number format)."""
    search = result["search"]
    rows = []
    for key, label in (("verify_new", "a new query"), ("verify_repeat", "the query repeated")):
        part = result[key]
        added, cpu = fmt(part["added_p50_ms"], " ms"), fmt(part["added_cpu_p50_ms"], " ms")
        rows.append(
            (
                f"`verify=true` on {result['matches_judged_per_verify']} matches, {label}:"
                " added p50 (CPU)",
                f"+{added} (CPU +{cpu})",
                f"search alone {fmt(search['p50_ms'], ' ms')}",
                fmt(part["ratio_to_search"], "x"),
            )
        )
    if "judge_own_model_tokens" in result:
        new, own = result["judge_new"], result["judge_own_model_tokens"]
        rows.append(
            (
                "  the judge alone, new: MiniLM's first layers vs the model's own tokens (p50)",
                fmt(new["p50_ms"], " ms"),
                f"own tokens {fmt(own['p50_ms'], ' ms')}",
                fmt(new["p50_ms"] / own["p50_ms"], "x"),
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.verify_cost", description=__doc__)
    parser.add_argument("--size", type=int, default=2000, help="highlights in the library")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--tiny", action="store_true", help="200 highlights, 5 queries (CI)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    size, query_count = (200, 5) if args.tiny else (args.size, args.queries)
    results: dict[str, Any] = {"machine": machine(), "size": size, "queries": query_count}
    built = libraries.library_for(size, use_cache=True, directory=CACHE_DIR)
    log(f"verify cost: {query_count} queries on {size} highlights")
    results["verify"] = measure(built.path, query_count)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "verify.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results["verify"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
