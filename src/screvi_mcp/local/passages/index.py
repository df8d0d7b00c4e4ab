"""`PassageIndex`: the vectors of one library's article passages, kept current.

Writes never wait for the model: a body's passages are queued for vectors in the transaction
that writes them (`store/passages.py`), and this index's worker (the embedding queue's
`EmbeddingWorker`, with the queue's claim/lease code over `PASSAGE_TABLES`) embeds them after
the commit. A passage is found by keywords at once and by meaning once its round is done:
docs/articles.md states the measured delay.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections import OrderedDict
from typing import Protocol

import numpy as np
import numpy.typing as npt

from screvi_mcp.local.passages.tables import PASSAGE_TABLES
from screvi_mcp.local.search import embedding_queue
from screvi_mcp.local.search.embedding_worker import EmbeddingWorker
from screvi_mcp.local.search.vector_tables import VectorTables
from screvi_mcp.local.search.vectors import VectorMatrix
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import passages as passage_rows

log = logging.getLogger("screvi_mcp.local.passages")

Vectors = npt.NDArray[np.float32]
# Passages one worker round claims and embeds; each is up to ~250 tokens, so a round is a
# second or two of model time (what closing the library may wait for), and the write lock
# is held only to store the results.
ROUND = 16
# The change log other processes read keeps this many rows; one that fell further behind
# reloads every vector (as the highlight index does).
CHANGE_LOG_KEEP = 100_000
# Query vectors kept: an agent paging through results asks the same query again.
QUERY_CACHE = 128
# From this many passages a query compares one-bit sign codes first and re-scores the nearest
# in float32 (the highlight index's `VectorMatrix`, which does this from 50k rows). Passages
# reach such sizes sooner (2,000 articles are ~40k passages), and only a hit's first few
# places matter here. Measured at 40k passages (bench.article_passages, 2026-11-26): the
# float32 scan cost ~10 ms of CPU per query, 28-39 ms wall under load (BLAS threads waiting).
SIGN_FROM_ROWS = 20_000
# An article's introduction (or any passage that restates the whole piece) is near every
# query about its subject, and was shown instead of the passage that answers: the right
# article was in the top 3 for 0.98-1.00 of the labelled queries, the right passage for
# 0.70-0.77. So the passage shown for an article is chosen by its cosine minus this much of
# its cosine with the article's mean vector (how generic it is within the article). Fitted
# on the tuning half of the labelled long articles over 0, 0.1, ..., 0.5, 0.7 and 1 (MiniLM
# and mpnet summed; docs/articles.md): held-out top-3 went from 0.70 to 0.74 (MiniLM) and
# from 0.77 to 0.79 (mpnet).
GENERIC_PENALTY = 0.5


class Embedder(Protocol):
    model_id: str
    dimensions: int

    def embed(self, texts: list[str]) -> Vectors: ...


def _stack(vectors: list[Vectors], dimensions: int) -> Vectors:
    if not vectors:
        return np.zeros((0, dimensions), dtype=np.float32)
    return np.stack(vectors).astype(np.float32, copy=False)


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class PassageIndex:
    """The English model's vectors of every passage (`MultilingualPassageIndex`, beside it,
    holds the multilingual model's of non-English articles' passages)."""

    tables: VectorTables = PASSAGE_TABLES
    which = ""  # a condition on `p` (article_passages): the passages this index embeds

    def __init__(self, library: Library, embedder: Embedder) -> None:
        self.library = library
        self.embedder = embedder
        self.model_id = f"{embedder.model_id}/passage.v1"
        self.matrix = VectorMatrix(embedder.dimensions)
        self.matrix.set_sign_from_rows(SIGN_FROM_ROWS)
        self._lock = threading.Lock()
        self._seen_change = 0
        self._queries: OrderedDict[str, Vectors] = OrderedDict()
        self.worker = EmbeddingWorker(self)  # type: ignore[arg-type]  # duck-typed: embed_queued

    # -- vectors in memory ------------------------------------------------------------------

    def load(self) -> None:
        conn = self.library.connection()
        seen = self._latest_change(conn)
        loaded = self._read(conn, f"SELECT seq, vector FROM {self.tables.vectors} WHERE model = ?")
        with self._lock:
            self.matrix.replace_all(list(loaded), _stack(list(loaded.values()), self.dimensions))
            self._seen_change = seen

    def _read(self, conn: sqlite3.Connection, sql: str, *args: object) -> dict[int, Vectors]:
        rows = conn.execute(sql, (self.model_id, *args)).fetchall()
        return {int(r[0]): np.frombuffer(r[1], dtype="<f4").astype(np.float32) for r in rows}

    def _latest_change(self, conn: sqlite3.Connection) -> int:
        sql = f"SELECT coalesce(max(id), 0) FROM {self.tables.changes}"
        return int(conn.execute(sql).fetchone()[0])

    def sync(self, conn: sqlite3.Connection) -> None:
        """Apply vector writes and deletions committed since we last looked (by any process)."""
        latest = self._latest_change(conn)
        if latest <= self._seen_change:
            return
        oldest = conn.execute(f"SELECT min(id) FROM {self.tables.changes}").fetchone()[0]
        if oldest is not None and int(oldest) > self._seen_change + 1:
            self.load()  # the log was pruned past what this process has seen
            return
        changed = [
            int(r[0])
            for r in conn.execute(
                f"SELECT DISTINCT seq FROM {self.tables.changes} WHERE id > ? AND id <= ?",
                (self._seen_change, latest),
            )
        ]
        found = self._read(
            conn,
            f"SELECT seq, vector FROM {self.tables.vectors} WHERE model = ? "
            "AND seq IN (SELECT value FROM json_each(?))",
            json.dumps(changed),
        )
        with self._lock:
            self.matrix.upsert(list(found), _stack(list(found.values()), self.dimensions))
            self.matrix.remove([seq for seq in changed if seq not in found])
            self._seen_change = max(self._seen_change, latest)

    @property
    def dimensions(self) -> int:
        return int(self.embedder.dimensions)

    def __len__(self) -> int:
        return len(self.matrix)

    def top(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(passage id, cosine) of the `limit` passages nearest to `query`, best first."""
        self.sync(self.library.connection())
        if not len(self.matrix):
            return []
        # Every cosine (-1 floor): fusion ranks passages below the cut too, for keyword matches.
        return self.matrix.top(self.query_vector(query), -1.0, limit)

    def specific_passages(
        self, conn: sqlite3.Connection, query: str, article_ids: list[str]
    ) -> dict[str, list[tuple[int, float, float]]]:
        """For each article, its passages as (id, cosine with `query`, score): the score is
        the cosine minus GENERIC_PENALTY x the passage's cosine with its article's mean
        vector (see there). Articles with fewer than two embedded passages are left out."""
        rows = conn.execute(
            "SELECT p.article_id, p.id, e.vector FROM article_passages p "
            f"JOIN {self.tables.vectors} e ON e.seq = p.id AND e.model = ? "
            "WHERE p.article_id IN (SELECT value FROM json_each(?)) ORDER BY p.id",
            (self.model_id, json.dumps(article_ids)),
        ).fetchall()
        members: dict[str, tuple[list[int], list[Vectors]]] = {}
        for article_id, seq, blob in rows:
            ids, vectors = members.setdefault(str(article_id), ([], []))
            ids.append(int(seq))
            vectors.append(np.frombuffer(blob, dtype="<f4"))
        query_vector = self.query_vector(query)
        scored: dict[str, list[tuple[int, float, float]]] = {}
        for article_id, (ids, vectors) in members.items():
            if len(ids) < 2:
                continue
            matrix = np.stack(vectors).astype(np.float32)
            centroid = matrix.mean(axis=0)
            centroid /= max(float(np.linalg.norm(centroid)), 1e-12)
            cosines = matrix @ query_vector
            scores = cosines - GENERIC_PENALTY * (matrix @ centroid)
            scored[article_id] = list(zip(ids, cosines.tolist(), scores.tolist(), strict=True))
        return scored

    def query_vector(self, query: str) -> Vectors:
        with self._lock:
            cached = self._queries.get(query)
            if cached is not None:
                self._queries.move_to_end(query)
                return cached
        vector = self._embed_query(query)
        with self._lock:
            self._queries[query] = vector
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector

    def _embed_query(self, query: str) -> Vectors:
        return self.embedder.embed([query])[0]

    # -- the queue (what EmbeddingWorker calls) ----------------------------------------------

    def embed_queued(self, claim: str, limit: int = ROUND) -> int:
        """One round: claim up to `limit` queued passages, embed and store them."""
        if not embedding_queue.claimable(self.library.connection(), self.tables):
            return 0
        with self.library.write() as conn:
            seqs = embedding_queue.claim(conn, claim, limit, self.tables)
        if not seqs:
            return 0
        try:
            self._embed(seqs, claim)
        except BaseException:
            if not self.library.closed:
                with self.library.write() as conn:
                    embedding_queue.release(conn, claim, self.tables)
            raise
        return len(seqs)

    def _embed(self, seqs: list[int], claim: str) -> None:
        texts = passage_rows.texts(self.library.connection(), seqs)
        order = sorted(texts, key=lambda seq: len(texts[seq]))
        vectors = self.embedder.embed([texts[seq] for seq in order]) if order else None
        with self.library.write() as conn:
            if vectors is not None:
                # A passage rebuilt while it was embedded is gone (ids are never reused): its
                # row no longer exists and the insert below would break the foreign key.
                alive = passage_rows.texts(conn, order)
                conn.executemany(
                    f"INSERT INTO {self.tables.vectors}(seq, model, text_hash, vector) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT(seq) DO UPDATE SET model = excluded.model,"
                    " text_hash = excluded.text_hash, vector = excluded.vector",
                    [
                        (seq, self.model_id, _hash(texts[seq]), vector.astype("<f4").tobytes())
                        for seq, vector in zip(order, vectors, strict=True)
                        if alive.get(seq) == texts[seq]
                    ],
                )
            embedding_queue.finish(conn, claim, seqs, self.tables)
            embedding_queue.release(conn, claim, self.tables)
            changes = self.tables.changes
            conn.execute(
                f"DELETE FROM {changes} WHERE id <= (SELECT max(id) FROM {changes}) - ?",
                (CHANGE_LOG_KEEP,),
            )
        self.sync(self.library.connection())

    def queue_missing(self) -> None:
        """Queue passages without a vector of this model (a new model, or a crash)."""
        conn = self.library.connection()
        missing = [
            int(r[0])
            for r in conn.execute(
                f"SELECT p.id FROM article_passages p LEFT JOIN {self.tables.vectors} e "
                f"ON e.seq = p.id AND e.model = ? LEFT JOIN {self.tables.queue} q "
                f"ON q.seq = p.id WHERE e.seq IS NULL AND q.seq IS NULL{self.which}",
                (self.model_id,),
            )
        ]
        if missing:
            log.info("queued %d article passages that have no vector yet", len(missing))
            with self.library.write() as write_conn:
                embedding_queue.enqueue(write_conn, missing, self.tables)
        self.worker.wake()

    def pending(self) -> int:
        return embedding_queue.pending(self.library.connection(), self.tables)
