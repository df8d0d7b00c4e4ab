"""Where the time goes: cProfile of a hybrid search or of bulk ingest on a generated library.

    python -m bench.profile search bench/.cache/library-100000-v1.sqlite3 [QUERIES]
    python -m bench.profile ingest bench/.cache/library-10000-v1.sqlite3 [COUNT]

`ingest` writes into the library it is given: point it at a copy. Prints the functions with
the most cumulative time; the README quotes these when a target is missed.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from pathlib import Path

from bench import corpus


def _search(path: Path, count: int) -> cProfile.Profile:
    from screvi_mcp.local.search import attach, engine
    from screvi_mcp.local.storage.library import Library

    library = Library.open(path)
    attach.attach_semantic_index(library, backfill="never")
    for text in corpus.queries(10, seed=99):
        engine.search(library, engine.SearchQuery(text))
    profile = cProfile.Profile()
    profile.enable()
    for text in corpus.queries(count):
        engine.search(library, engine.SearchQuery(text, per_page=20))
    profile.disable()
    library.close()
    return profile


def _ingest(path: Path, count: int) -> cProfile.Profile:
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
    profile = cProfile.Profile()
    profile.enable()
    for start in range(0, count, 100):
        highlights.create_many(library, items[start : start + 100], bulk=True)
    profile.disable()
    library.close()
    return profile


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
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse(argv)
    path, count = args.path, args.count
    profile = _search(path, count) if args.command == "search" else _ingest(path, count)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
    print(out.getvalue())


if __name__ == "__main__":
    main(sys.argv[1:])
