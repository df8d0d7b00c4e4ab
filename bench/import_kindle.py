"""Section `import`: a generated Kindle clippings file imported with embeddings.

The file is written like a device writes it (BOM, CRLF, English metadata lines, a note and a
bookmark now and then). In one fresh worker process, with the model loaded before either
clock starts:

- baseline: the same highlights (same texts, sources, notes, locations, dates) created
  through the store's bulk-create path, 100 per call, as POST /highlights/bulk does;
- import: `screvi-mcp import kindle` (jobs.import_file: parse, validate, batches, keys).

Each is measured twice, so that every ratio compares like with like:
- with embeddings: a fresh library with the semantic index attached. The import waits for
  the embedding queue before it returns, so the baseline's clock also runs until the queue
  is empty (`bulk_embedded_*`); `ratio_to_bulk` is this pair. The baseline's rate at its
  last acknowledgement (writes answer at commit, the queue embeds behind them) is kept as
  `bulk_acknowledged_per_s`, labelled as such: it leaves the embedding out.
- writes only: no index attached (`import_file(embed=False)` against bulk create without
  an index): what the import's parsing, keys and matching cost over the bare writes.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus

BULK_REQUEST = 100
BOOKS_PER_1000 = 12
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
)


def clippings(count: int, seed: int = 21) -> tuple[str, list[dict[str, Any]]]:
    """A clippings file with `count` highlights, and the same highlights as bulk items."""
    rng = random.Random(seed)
    books = [
        (spec.name.replace("(", "[").replace(")", "]"), spec.author or "Anonymous")
        for spec in corpus.sources(max(1, count * BOOKS_PER_1000 // 1000), seed=seed)
    ]
    specs = corpus.highlights(count, len(books), seed=seed)
    next_location = [10] * len(books)
    parts: list[str] = []
    items: list[dict[str, Any]] = []
    for number, spec in enumerate(specs):
        book = number % len(books)
        title, author = books[book]
        start = next_location[book]
        end = start + rng.randint(0, 4)
        next_location[book] = end + rng.randint(2, 30)  # passages never overlap
        day = 1 + number % 28
        month = number % 12
        added = (
            f"Added on {_DAYS[number % 7]}, {day} {_MONTHS[month]} 2024 "
            f"{number % 24:02d}:{number % 60:02d}:{(number * 7) % 60:02d}"
        )
        # Unique text per highlight: the generated passages repeat at this size.
        content = f"{spec.content} (passage {number})"
        head = f"{title} ({author})\r\n"
        parts.append(
            f"{head}- Your Highlight on page {start // 15 + 1} | location {start}-{end} | "
            f"{added}\r\n\r\n{content}\r\n==========\r\n"
        )
        item: dict[str, Any] = {
            "content": content,
            "location": start,
            "date": f"2024-{month + 1:02d}-{day:02d}T{number % 24:02d}:{number % 60:02d}:"
            f"{(number * 7) % 60:02d}Z",
            "book": book,
        }
        if spec.note:
            parts.append(
                f"{head}- Your Note on page {start // 15 + 1} | location {end} | {added}\r\n\r\n"
                f"{spec.note}\r\n==========\r\n"
            )
            item["note"] = spec.note
        if number % 50 == 0:
            parts.append(
                f"{head}- Your Bookmark on page {start // 15 + 1} | location {end + 1} | "
                f"{added}\r\n\r\n\r\n==========\r\n"
            )
        items.append(item)
    for item in items:
        item["title"], item["author"] = books[item.pop("book")]
    return "\ufeff" + "".join(parts), items


def _bulk_baseline(
    library_path: Path, items: list[dict[str, Any]], *, embed: bool
) -> tuple[float, float]:
    """(seconds until the last bulk create answered, seconds until every highlight was
    embedded); without `embed` no index is attached and the two are the same."""
    from screvi_mcp.local.api.bodies import HighlightCreate, SourceCreate
    from screvi_mcp.local.search import attach
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights, sources

    library = Library.open(library_path)
    try:
        index = attach.attach_semantic_index(library, backfill="never") if embed else None
        if embed and index is None:
            raise RuntimeError("no semantic index: is the 'local' extra installed?")
        started = time.perf_counter()
        source_ids: dict[tuple[str, str], str] = {}
        for item in items:
            key = (item["title"], item["author"])
            if key not in source_ids:
                body = SourceCreate(name=item["title"], type="book", author=item["author"])
                source_ids[key] = sources.create(library, body)["id"]
        bodies = [
            HighlightCreate(
                content=item["content"],
                note=item.get("note"),
                location=item["location"],
                date=item["date"],
                source_id=source_ids[(item["title"], item["author"])],
            )
            for item in items
        ]
        for start in range(0, len(bodies), BULK_REQUEST):
            highlights.create_many(library, bodies[start : start + BULK_REQUEST], bulk=True)
        acknowledged = time.perf_counter() - started
        if index is not None:
            if not index.wait_until_embedded(3600):
                raise RuntimeError("the embedding queue did not drain")
            attach.detach_semantic_index(library)
        return acknowledged, time.perf_counter() - started
    finally:
        library.close()


def worker(count: int) -> dict[str, Any]:
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.storage.store.imports import Outcome
    from screvi_mcp.transfer import jobs

    text, items = clippings(count)
    load_embedder()  # the model's load is start-up cost, paid before either clock starts
    with tempfile.TemporaryDirectory(prefix="screvi-bench-import-") as folder:
        base = Path(folder)
        clippings_path = base / "My Clippings.txt"
        clippings_path.write_text(text, encoding="utf-8", newline="")
        bulk_ack_seconds, bulk_seconds = _bulk_baseline(base / "bulk.sqlite3", items, embed=True)
        started = time.perf_counter()
        report = jobs.import_file("kindle", clippings_path, base / "import.sqlite3")
        import_seconds = time.perf_counter() - started
        started = time.perf_counter()
        again = jobs.import_file("kindle", clippings_path, base / "import.sqlite3")
        rerun_seconds = time.perf_counter() - started
        bulk_plain_seconds, _ = _bulk_baseline(base / "bulk-plain.sqlite3", items, embed=False)
        started = time.perf_counter()
        plain = jobs.import_file("kindle", clippings_path, base / "plain.sqlite3", embed=False)
        import_plain_seconds = time.perf_counter() - started
    created = report.highlights[Outcome.created]
    if created != count or again.highlights[Outcome.created] != 0:
        raise RuntimeError(f"imported {created} of {count}; re-run created {again.new_highlights}")
    if plain.highlights[Outcome.created] != count:
        raise RuntimeError(f"imported {plain.highlights[Outcome.created]} of {count} unembedded")
    return {
        "count": count,
        "file_mib": round(len(text.encode()) / 2**20, 2),
        "import_seconds": round(import_seconds, 2),
        "import_per_s": round(count / import_seconds, 1),
        # The baseline of the same work: bulk create until every highlight is embedded.
        "bulk_seconds": round(bulk_seconds, 2),
        "bulk_embedded_per_s": round(count / bulk_seconds, 1),
        "ratio_to_bulk": round(bulk_seconds / import_seconds, 3),
        # Not comparable with the import (it leaves the embedding out): for reference.
        "bulk_acknowledged_per_s": round(count / bulk_ack_seconds, 1),
        "writes_only": {
            "import_per_s": round(count / import_plain_seconds, 1),
            "bulk_per_s": round(count / bulk_plain_seconds, 1),
            "ratio_to_bulk": round(bulk_plain_seconds / import_plain_seconds, 3),
        },
        "rerun_seconds": round(rerun_seconds, 2),
        "rerun_new": again.highlights[Outcome.created],
    }


def run(count: int) -> dict[str, Any]:
    from bench.common import log, run_worker

    log(f"import: {count} highlights from a generated clippings file, and the bulk baseline")
    return run_worker(["-m", "bench.import_kindle", str(count)], timeout=3600)


def parse(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.import_kindle",
        description="Import a generated Kindle clippings file against the bulk-create "
        "baseline, in this process; prints the results as JSON.",
    )
    parser.add_argument("count", type=int, help="highlights in the file, e.g. 20000")
    count: int = parser.parse_args(argv).count
    return count


if __name__ == "__main__":
    print(json.dumps(worker(parse(sys.argv[1:]))))
