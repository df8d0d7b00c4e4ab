"""Generated embedded libraries of N highlights, built once and cached in bench/.cache/.

Rows go in through the store's own bulk create (`create_many`) with no index attached, and
are then embedded in batches by the search package's `reindex`, exactly as
`screvi-mcp reindex` would: the same vectors as live ingest, without the per-request cost.
The ingest *rate* is measured separately, on a copy, through the real path
(`library_worker ingest`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import corpus
from bench.common import BENCH_RATE_LIMIT, CACHE_DIR, log

# Bump when the generator or the build changes, so stale cached libraries are not reused.
GENERATOR_VERSION = 1
# Libraries larger than this reuse this many unique passages (those of the library of this
# size), each several times, and copy their stored vectors instead of embedding them again:
# embedding 100k texts on a shared 2-core machine takes over an hour. A vector is a pure
# function of the text, so the copies are exactly what the model would produce; scan cost
# depends on the row count and FTS5 cost on posting-list lengths, which scale the same way.
UNIQUE_TEXTS = 10_000
ARTICLE_CHARS = 30000
BUILD_BATCH = 1000


@dataclass(frozen=True)
class BuiltLibrary:
    path: Path
    size: int
    highlight_ids: list[str]
    article_id: str
    build_seconds: float | None  # None when reused from the cache

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "highlight_ids": self.highlight_ids,
            "article_id": self.article_id,
            "build_seconds": self.build_seconds,
        }


def library_for(size: int, *, use_cache: bool, directory: Path = CACHE_DIR) -> BuiltLibrary:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"library-{size}-v{GENERATOR_VERSION}.sqlite3"
    meta_path = path.with_suffix(".json")
    if use_cache and path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("complete") and model_matches(path):
            log(f"reusing the cached {size}-highlight library {path.name}")
            return BuiltLibrary(path, size, meta["highlight_ids"], meta["article_id"], None)
    for stale in (path, meta_path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    started = time.perf_counter()
    built = _build(path, size)
    built = BuiltLibrary(
        path, size, built.highlight_ids, built.article_id, round(time.perf_counter() - started, 1)
    )
    meta_path.write_text(json.dumps({**built.to_json(), "complete": True}))
    return built


def model_matches(path: Path) -> bool:
    """The cached vectors were made by the model this install would load."""
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.index import index_model_id

    return recorded_model(path) == index_model_id(load_embedder())


def recorded_model(path: Path) -> str | None:
    """The English model (and text recipe) the library at `path` says embedded it."""
    from screvi_mcp.local.search.embedding_rows import MODEL_SETTING

    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT value FROM settings WHERE key = ?", (MODEL_SETTING,)).fetchone()
    finally:
        conn.close()
    return None if row is None else str(row[0])


def _build(path: Path, size: int) -> BuiltLibrary:
    from screvi_mcp.local.api.app import RATE_LIMIT_SETTING
    from screvi_mcp.local.api.bodies import HighlightCreate, SourceCreate
    from screvi_mcp.local.search import attach
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights, sources

    library = Library.open(path)
    try:
        library.set_setting(RATE_LIMIT_SETTING, str(BENCH_RATE_LIMIT))
        source_specs = corpus.sources(max(5, size // 40))
        source_ids = [
            sources.create(
                library, SourceCreate(name=spec.name, type=spec.type, author=spec.author)
            )["id"]
            for spec in source_specs
        ]
        specs = corpus.highlights(size, len(source_ids))
        donor = None
        if size > UNIQUE_TEXTS:
            donor = library_for(UNIQUE_TEXTS, use_cache=True, directory=path.parent).path
            pool = corpus.highlights(UNIQUE_TEXTS, max(5, UNIQUE_TEXTS // 40))
            specs = [
                replace(
                    spec, content=pool[i % UNIQUE_TEXTS].content, note=pool[i % UNIQUE_TEXTS].note
                )
                for i, spec in enumerate(specs)
            ]
        ids: list[str] = []
        started = time.perf_counter()
        for start in range(0, size, BUILD_BATCH):
            items = [
                HighlightCreate(
                    content=spec.content,
                    note=spec.note,
                    favorite=spec.favorite,
                    source_id=None if spec.source_index is None else source_ids[spec.source_index],
                    tags=spec.tags or None,
                    location=spec.location,
                )
                for spec in specs[start : start + BUILD_BATCH]
            ]
            created = highlights.create_many(library, items, bulk=True)
            ids.extend(item["id"] for item in created)
        log(f"{size} highlights written in {time.perf_counter() - started:.1f} s; embedding")
        started = time.perf_counter()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if time.perf_counter() - last[0] > 15 or done == total:
                last[0] = time.perf_counter()
                log(f"  embedded {done}/{total}")

        if donor is None:
            attach.reindex(library, progress)
        else:
            _copy_vectors(library, donor)
        log(f"embedded in {time.perf_counter() - started:.1f} s")
        article_id = _add_article(library)
        library.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        library.close()
    step = max(1, len(ids) // 200)
    return BuiltLibrary(path, size, ids[::step][:200], article_id, None)


def _copy_vectors(library: Any, donor: Path) -> None:
    """Store vectors for every highlight, copied by text hash from `donor` where it has one."""
    import numpy as np

    from screvi_mcp.local.search import embedding_rows
    from screvi_mcp.local.search.embedder import load_embedder
    from screvi_mcp.local.search.index import index_model_id

    embedder = load_embedder()
    model = index_model_id(embedder)
    conn = sqlite3.connect(donor)
    try:
        known = {
            str(text_hash): bytes(vector)
            for text_hash, vector in conn.execute(
                "SELECT text_hash, vector FROM highlight_embeddings WHERE model = ?", (model,)
            )
        }
    finally:
        conn.close()
    seqs = [int(row[0]) for row in library.connection().execute("SELECT seq FROM highlights")]
    embedded = 0
    for chunk in embedding_rows.chunks(seqs, 5000):
        texts = embedding_rows.live_texts(library.connection(), chunk)
        missing = [item for item in texts if item.hash not in known]
        if missing:
            fresh = embedder.embed([item.text for item in missing])
            for item, vector in zip(missing, fresh, strict=True):
                known[item.hash] = vector.astype("<f4").tobytes()
            embedded += len(missing)
        vectors = np.stack([np.frombuffer(known[item.hash], dtype="<f4") for item in texts])
        with library.write() as conn_w:
            embedding_rows.save(conn_w, model, texts, vectors)
            # Their vectors are stored: nothing of these is left for the embedding queue.
            conn_w.execute(
                "DELETE FROM embedding_queue WHERE seq IN (SELECT value FROM json_each(?))",
                (json.dumps(chunk),),
            )
    library.set_setting(embedding_rows.MODEL_SETTING, model)
    log(f"vectors copied from {donor.name}; {embedded} texts embedded afresh")


def _add_article(library: Any) -> str:
    """A parsed article, written as the fetcher would leave it (no network involved)."""
    from screvi_mcp.local.fetching import article_rows
    from screvi_mcp.local.fetching.extract import ExtractedArticle

    text = corpus.article_text(ARTICLE_CHARS)
    url = "http://127.0.0.1:9/bench/long-read"
    html = "".join(f"<p>{paragraph}</p>" for paragraph in text.split("\n\n"))
    with library.write() as conn:
        article_id = article_rows.insert_article(conn, url, url)
        claim = article_rows.claim_article(conn, article_id, "bench", 60.0)
        assert claim is not None
        article_rows.store_parsed(
            conn,
            claim,
            ExtractedArticle(
                content_html=html,
                content_text=text,
                title="The Quiet Power of Long Reads",
                author="Ada Holloway",
                site_name="Bench Quarterly",
                excerpt=text[:200],
                word_count=len(text.split()),
                reading_time_minutes=max(1, len(text.split()) // 230),
            ),
            final_url=url,
        )
    return str(article_id)


def copy_library(source: Path, target: Path) -> Path:
    """A consistent copy (WAL included) through SQLite's backup API."""
    for stale in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        stale.unlink(missing_ok=True)
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target
