"""Where the time goes: a profile of a hybrid search or of bulk ingest on a generated library.

    python -m bench.profile search bench/.cache/library-100000-v1.sqlite3 [QUERIES] [--warm]
    python -m bench.profile ingest bench/.cache/library-10000-v1.sqlite3 [COUNT]

`ingest` writes into the library it is given: point it at a copy. `--warm` runs each query
once before profiling it, so the query vectors are cached and the profile is everything
beyond embedding the query. With pyinstrument installed (the `bench` extra) it prints its
call tree, threads included; otherwise cProfile's functions by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from pathlib import Path
from typing import Any

from bench import corpus


def _search(path: Path, count: int, warm: bool, profiler: Profiler) -> None:
    from screvi_mcp.local.search import attach, engine
    from screvi_mcp.local.storage.library import Library

    library = Library.open(path)
    attach.attach_semantic_index(library, backfill="never")
    for text in corpus.queries(10, seed=99):
        engine.search(library, engine.SearchQuery(text))
    queries = corpus.queries(count)
    if warm:
        for text in queries:
            engine.search(library, engine.SearchQuery(text, per_page=20))
    with profiler:
        for text in queries:
            engine.search(library, engine.SearchQuery(text, per_page=20))
    library.close()


def _ingest(path: Path, count: int, profiler: Profiler) -> None:
    from screvi_mcp.local.api.bodies import HighlightCreate
    from screvi_mcp.local.search import attach
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights

    library = Library.open(path)
    attach.attach_semantic_index(library, backfill="never")
    items = [
        HighlightCreate(content=spec.content, note=spec.note, tags=spec.tags or None)
        for spec in corpus.highlights(count, 1, seed=4242)
    ]
    with profiler:
        for start in range(0, count, 100):
            highlights.create_many(library, items[start : start + 100], bulk=True)
    library.close()


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.profile",
        description="cProfile of a hybrid search or of bulk ingest on a generated library "
        "(ingest writes into the library: point it at a copy).",
    )
    parser.add_argument("command", choices=("search", "ingest"))
    parser.add_argument("path", type=Path, help="a library, e.g. from bench/.cache/")
    parser.add_argument(
        "count", type=int, nargs="?", default=200, help="queries or highlights (default 200)"
    )
    parser.add_argument("--warm", action="store_true", help="search: query vectors cached")
    return parser.parse_args(argv)


class Profiler:
    """pyinstrument where installed (sampling, every thread), else cProfile."""

    def __init__(self) -> None:
        try:
            from pyinstrument import Profiler as Sampling

            self._sampling: Any = Sampling(interval=0.0005, async_mode="disabled")
        except ImportError:
            self._sampling = None
        self._profile = cProfile.Profile()

    def __enter__(self) -> None:
        if self._sampling is not None:
            self._sampling.start()
        else:
            self._profile.enable()

    def __exit__(self, *exc: object) -> None:
        if self._sampling is not None:
            self._sampling.stop()
        else:
            self._profile.disable()

    def report(self) -> str:
        if self._sampling is not None:
            return str(self._sampling.output_text(unicode=False, color=False, show_all=False))
        out = io.StringIO()
        pstats.Stats(self._profile, stream=out).sort_stats("cumulative").print_stats(25)
        return out.getvalue()


def main(argv: list[str]) -> None:
    args = parse(argv)
    profiler = Profiler()
    if args.command == "search":
        _search(args.path, args.count, args.warm, profiler)
    else:
        _ingest(args.path, args.count, profiler)
    print(profiler.report())


if __name__ == "__main__":
    main(sys.argv[1:])
