"""The semantic index of one library: stored vectors, the matrix, and the listener.

Writes never wait for the model: a create or edit queues its highlights in the same
transaction (migration 0008's triggers) and answers at commit; the index's background worker
(`embedding_worker`) embeds the queue in length-sorted batches and stores the vectors. A new
highlight is found by keywords at once and by meaning moments later; an edit drops the old
vector at commit, so no search matches a highlight by what it used to say.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np

from screvi_mcp.local.search import compact_file, embedding_queue, embedding_rows
from screvi_mcp.local.search.calibration import Calibration
from screvi_mcp.local.search.compact_matrix import COMPACT_FROM_ROWS, CompactMatrix
from screvi_mcp.local.search.embedding_rows import HighlightText
from screvi_mcp.local.search.embedding_text import RECIPE
from screvi_mcp.local.search.embedding_worker import EmbeddingWorker
from screvi_mcp.local.search.filters import Filters, admitted_seqs
from screvi_mcp.local.search.fusion import SemanticMatch
from screvi_mcp.local.search.vector_tables import MINILM_TABLES, VectorTables
from screvi_mcp.local.search.vectors import Matrix, VectorMatrix
from screvi_mcp.local.search.verifier import Verifier
from screvi_mcp.local.storage.library import Library

log = logging.getLogger("screvi_mcp.local.search")

# Highlights embedded per write transaction: bounds memory and how long the writer lock is
# held, while batching enough for the model to run efficiently.
EMBED_CHUNK = 256
# Queue rows one worker round claims: enough to sort by length into well-filled batches,
# few enough that a crash strands little behind its lease.
QUEUE_CLAIM = 128
# With verify=true, only this many of the best semantic matches are judged (the judge or a
# cross-encoder runs a model over each pair): the spec's "about 0.5 s". Semantic-only matches
# beyond them are kept, unjudged (verified_relevance null): nothing judged them off-topic.
VERIFY_LIMIT = 20
_QUERY_CACHE_SIZE = 256
# How many embedding writes the shared change log keeps. A process that has not searched
# for longer than that many writes reloads every vector instead of the changed ones.
CHANGE_LOG_KEEP = 100_000
# The log is pruned when its ids cross a multiple of this, not on every write.
PRUNE_EVERY = 1000
# A compact index's codes file (compact_file.py) is brought up to date from SQLite when at
# most this many vector changes came after it (60 MB of 768-d vectors, read in chunks);
# after more, the codes are rebuilt and saved again.
CODES_CATCH_UP = 20_000

# The queue's worker checks between slices of this many texts whether to stop.
STOP_CHECK_TEXTS = 32

Progress = Callable[[int, int], None]


class TextEmbedder(Protocol):
    """What the index needs of a model: `embed` turns highlight texts into L2-normalised
    float32 rows (MiniLM's `Embedder`, or the multilingual model's adapter)."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


class WorkerStopped(Exception):
    """The library is closing: the round is abandoned and its rows stay queued."""


def index_model_id(embedder: TextEmbedder) -> str:
    """What the library records as "embedded by": the weights and the text recipe."""
    return f"{embedder.model_id}/{RECIPE}"


class SemanticIndex:
    def __init__(
        self,
        library: Library,
        embedder: TextEmbedder,
        calibration: Calibration,
        verifier: Verifier,
        tables: VectorTables = MINILM_TABLES,
    ) -> None:
        self.library = library
        self.tables = tables
        self.embedder = embedder
        self.calibration = calibration
        self.verifier = verifier
        self.model_id = index_model_id(embedder)
        self.matrix: VectorMatrix | CompactMatrix = VectorMatrix(embedder.dimensions)
        # From this many stored vectors the index opens compactly (compact_matrix.py);
        # an attribute so that tests can lower it.
        self.compact_from_rows = COMPACT_FROM_ROWS
        self._write_lock = threading.Lock()
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        # Where this process is in the shared log of embedding writes, and which stretches
        # of it are its own writes (already in the matrix, so not read back).
        self._seen_change = 0
        self._own_changes: list[tuple[int, int]] = []
        self._sync_lock = threading.Lock()
        self.worker = EmbeddingWorker(self)
        # Indexes whose queue counts as this one's for `wait_until_embedded` (multilingual.py
        # adds its own to the English index's).
        self.companions: list[SemanticIndex] = []
        # While this says so, the worker leaves the queue to a faster model (interim.py).
        self.defers_to: Callable[[], bool] | None = None

    def load(self) -> None:
        """Fill the matrix from stored vectors: no embedding happens here."""
        conn = self.library.connection()
        # Read the log position first: a write landing during the load is applied twice at
        # worst, never missed.
        seen = embedding_rows.latest_change(conn, self.tables)
        count = embedding_rows.count_vectors(conn, self.model_id, self.tables)
        # Only the plain matrix goes compact (the multilingual index keeps its own split).
        plain = type(self.matrix) is VectorMatrix or isinstance(self.matrix, CompactMatrix)
        if not plain or count < self.compact_from_rows:
            seqs, vectors = embedding_rows.load_live(
                conn, self.model_id, self.embedder.dimensions, self.tables
            )
            if isinstance(self.matrix, CompactMatrix):  # shrunk below the threshold
                self.matrix = VectorMatrix(self.embedder.dimensions)
            self.matrix.replace_all(seqs, vectors)
        else:
            self.matrix, included = self._compact(conn, count, seen)
            if included < seen:  # codes from the file: the vectors changed since, from SQLite
                changes = embedding_rows.changes_after(conn, included, self.tables)
                changed = sorted({seq for _, seq in changes})
                for chunk in embedding_rows.chunks(changed, EMBED_CHUNK):
                    self._load_seqs(chunk)
        self._seen_change = seen

    def _compact(
        self, conn: sqlite3.Connection, count: int, seen: int
    ) -> tuple[CompactMatrix, int]:
        """Codes of every stored vector and the change they include: from the codes file
        when it is current (compact_file.py), else read a block at a time from SQLite (the
        float32 matrix of a very large library is never held) and saved for next time."""
        dimensions = self.embedder.dimensions
        matrix = CompactMatrix(dimensions, self._stored_vectors, capacity=count + count // 16)
        stamp = compact_file.Stamp(self.model_id, dimensions, seen, count)
        path = self._codes_path()
        if path is not None:
            found = self._read_codes(conn, matrix, path, stamp)
            if found is not None:
                return matrix, found
        matrix.clear()
        for seqs, vectors in embedding_rows.stream_live(
            conn, self.model_id, dimensions, self.tables
        ):
            matrix.extend(seqs, vectors)
        if path is not None:
            try:
                matrix.save(path, stamp)
            except OSError as exc:  # a read-only directory: open from SQLite next time too
                log.info("could not save the compact codes to %s: %s", path, exc)
        return matrix, seen

    def _codes_path(self) -> Path | None:
        database = self.library.path
        if not isinstance(database, Path) or str(database) == ":memory:":
            return None
        return compact_file.codes_path(database, self.tables.vectors)

    def _read_codes(
        self, conn: sqlite3.Connection, matrix: CompactMatrix, path: Path, now: compact_file.Stamp
    ) -> int | None:
        """Fill `matrix` from the codes file if it can be brought up to date; the change
        it includes, or None (the caller rebuilds)."""
        try:
            with open(path, "rb") as source:
                header = compact_file.read_header(source)
                if header is None:
                    return None
                saved = compact_file.stamp_of(header)
                if not _codes_current(conn, saved, now, self.tables):
                    return None
                if not matrix.read(source, int(header["count"])):
                    return None
        except (OSError, KeyError, ValueError) as exc:
            log.info("the compact codes in %s are not usable (%s); rebuilding", path, exc)
            return None
        return saved.change

    def _stored_vectors(self, seqs: list[int]) -> tuple[list[int], Matrix]:
        """Float32 vectors of those of `seqs` with a stored one (a compact matrix's short
        list), on the calling thread's connection."""
        return embedding_rows.load_vectors(
            self.library.connection(), self.model_id, self.embedder.dimensions, seqs, self.tables
        )

    def sync(self, conn: sqlite3.Connection) -> None:
        """Apply vectors other processes wrote since we last looked: one cheap query when
        nothing changed."""
        if embedding_rows.latest_change(conn, self.tables) <= self._seen_change:
            return
        with self._sync_lock:
            oldest = embedding_rows.oldest_change(conn, self.tables)
            if oldest is not None and oldest > self._seen_change + 1:
                log.info("the embedding change log moved past this process; reloading")
                self.load()
                return
            changes = embedding_rows.changes_after(conn, self._seen_change, self.tables)
            if not changes:
                return
            with self._write_lock:
                foreign = {
                    seq
                    for change, seq in changes
                    if not any(first <= change <= last for first, last in self._own_changes)
                }
                if foreign:
                    self._load_seqs(sorted(foreign))
                self._seen_change = changes[-1][0]
                self._own_changes = [
                    (first, last) for first, last in self._own_changes if last > self._seen_change
                ]

    # -- keeping in sync (HighlightListener) --------------------------------------------

    def highlights_changed(self, library: Library, seqs: list[int]) -> None:
        """Queue what the commit did not queue itself, and wake the worker: never embeds
        here, so the write that called us answers at once."""
        conn = library.connection()
        unqueued = sorted(set(seqs) - embedding_queue.queued_among(conn, seqs, self.tables))
        if unqueued:  # creates and edits were queued by triggers; a source rename was not
            with library.write() as write_conn:
                embedding_queue.enqueue(write_conn, unqueued, self.tables)
        self.worker.wake()

    def highlights_removed(self, library: Library, seqs: list[int]) -> None:
        self.matrix.remove(seqs)
        with self._write_lock, library.write() as conn:
            embedding_rows.delete(conn, seqs, self.tables)

    def embed(self, seqs: list[int], progress: Progress | None = None) -> int:
        """Embed, on this thread, those of `seqs` whose text has no current vector; returns
        how many. What `reindex` uses; writes go through the queue and the worker."""
        embedded = 0
        done = 0
        for chunk in embedding_rows.chunks(seqs, EMBED_CHUNK):
            embedded += self._embed_seqs(chunk, claim=None)
            done += len(chunk)
            if progress is not None:
                progress(done, len(seqs))
        return embedded

    def embed_queued(self, claim: str, limit: int = QUEUE_CLAIM) -> int:
        """One round of the queue: claim up to `limit` rows, embed, store, remove them.
        Returns how many rows were claimed (0: nothing is waiting that we may take)."""
        if self.defers_to is not None and self.defers_to():
            return 0  # a faster model goes first (interim.py); the worker looks again soon
        if not embedding_queue.claimable(self.library.connection(), self.tables):
            return 0  # the idle poll stays a read: no write lock taken for nothing
        with self.library.write() as conn:
            seqs = embedding_queue.claim(conn, claim, limit, self.tables)
        if not seqs:
            return 0
        try:
            self._embed_seqs(seqs, claim=claim)
        except BaseException:
            if not self.library.closed:
                with self.library.write() as conn:
                    embedding_queue.release(conn, claim, self.tables)
            raise
        return len(seqs)

    def pending(self) -> int:
        """Highlights still waiting for a vector (in any process's hands)."""
        return embedding_queue.pending(self.library.connection(), self.tables)

    def wait_until_embedded(self, timeout: float) -> bool:
        """Block until the queue is empty (True) or `timeout` seconds pass (False).

        For tests, benchmarks and one-shot commands; a server never waits on this."""
        deadline = time.monotonic() + timeout
        if not self.worker.wait_until_empty(self.pending, deadline):
            return False
        # The rows are gone once their vectors are committed; another process's vectors
        # still have to be read into this one's matrix.
        self.sync(self.library.connection())
        # The multilingual model's queue (multilingual.py) too: whoever waits for "found by
        # meaning" means in every language.
        return all(
            companion.wait_until_embedded(max(deadline - time.monotonic(), 0.0))
            for companion in self.companions
        )

    def _embed_seqs(self, seqs: list[int], claim: str | None) -> int:
        conn = self.library.connection()
        texts = embedding_rows.live_texts(conn, seqs)
        dead = set(seqs) - {item.seq for item in texts}
        if dead:  # edited after a delete, or never live: must not stay searchable
            self.matrix.remove(sorted(dead))
        stored = embedding_rows.stored_hashes(
            conn, self.model_id, [t.seq for t in texts], self.tables
        )
        fresh = [item for item in texts if stored.get(item.seq) != item.hash]
        reload = [
            item.seq
            for item in texts
            if stored.get(item.seq) == item.hash and item.seq not in self.matrix
        ]
        fresh.sort(key=lambda item: len(item.text))  # slices of similar length pad little
        vectors = self._embed_texts([item.text for item in fresh], claim) if fresh else None
        saved: list[HighlightText] = []
        with self._write_lock:
            with self.library.write() as write_conn:
                if fresh and vectors is not None:
                    # The text may have been edited while it was embedded: store only vectors
                    # of what the highlight says now (the edit queued it again).
                    current = {
                        item.seq: item.hash
                        for item in embedding_rows.live_texts(write_conn, [t.seq for t in fresh])
                    }
                    keep = [i for i, item in enumerate(fresh) if current.get(item.seq) == item.hash]
                    saved = [fresh[i] for i in keep]
                    vectors = vectors[keep]
                if saved and vectors is not None:
                    before = embedding_rows.latest_change(write_conn, self.tables)
                    embedding_rows.save(write_conn, self.model_id, saved, vectors, self.tables)
                    self._saved(write_conn, saved)
                    if self.tables == MINILM_TABLES:  # the English vectors (interim.py)
                        embedding_rows.drop_interim(write_conn, [item.seq for item in saved])
                    after = embedding_rows.latest_change(write_conn, self.tables)
                    # The writer holds the database, so these ids are all ours.
                    self._own_changes.append((before + 1, after))
                    if after % PRUNE_EVERY < len(saved):
                        embedding_rows.prune_changes(write_conn, CHANGE_LOG_KEEP, self.tables)
                if claim is not None:
                    embedding_queue.finish(write_conn, claim, seqs, self.tables)
                    embedding_queue.release(write_conn, claim, self.tables)
            if saved and vectors is not None:
                self.matrix.upsert([item.seq for item in saved], vectors)
            if reload:  # stored and unchanged but not in memory: read it back, don't re-embed
                self._load_seqs(reload)
        return len(saved)

    def _saved(self, conn: sqlite3.Connection, saved: list[HighlightText]) -> None:
        """Called in the transaction that stored `saved`: room for what a subclass keeps
        beside each vector (the multilingual index records the text's language)."""

    def _embed_texts(self, texts: list[str], claim: str | None) -> np.ndarray:
        """Embed in slices, so that a closing library stops the queue's round between two
        slices instead of waiting for all of it (or closing a connection in use)."""
        parts = []
        for start in range(0, len(texts), STOP_CHECK_TEXTS):
            if claim is not None and (self.worker.stopping or self.library.closed):
                raise WorkerStopped
            parts.append(self.embedder.embed(texts[start : start + STOP_CHECK_TEXTS]))
        return np.concatenate(parts)

    def _embed_query(self, text: str) -> np.ndarray:
        """A query's vector (a model that embeds queries unlike passages overrides this)."""
        return self.embedder.embed([text])[0]

    def _load_seqs(self, seqs: list[int]) -> None:
        """Make the matrix agree with the stored vectors of `seqs`: read those that have one,
        drop those whose vector was deleted (an edit drops it at commit)."""
        found, vectors = embedding_rows.load_vectors(
            self.library.connection(), self.model_id, self.embedder.dimensions, seqs, self.tables
        )
        gone = sorted(set(seqs) - set(found))
        if gone:
            self.matrix.remove(gone)
        self.matrix.upsert(found, vectors)

    # -- searching (registry.SemanticSide) ----------------------------------------------

    def query_vector(self, text: str) -> np.ndarray:
        with self._cache_lock:
            cached = self._query_cache.get(text)
            if cached is not None:
                self._query_cache.move_to_end(text)
                return cached
        vector = self._embed_query(text)
        with self._cache_lock:
            self._query_cache[text] = vector
            while len(self._query_cache) > _QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vector

    def cosines(self, text: str, seqs: list[int]) -> dict[int, float]:
        """The query's cosine with each of a few `seqs` that has a stored vector, read from
        the library (whichever form the matrix takes)."""
        found, vectors = self._stored_vectors(seqs)
        if not found:
            return {}
        return dict(zip(found, (vectors @ self.query_vector(text)).tolist(), strict=True))

    def semantic_ranking(
        self,
        conn: sqlite3.Connection,
        text: str,
        filters: Filters,
        min_relevance: float,
        limit: int,
    ) -> list[SemanticMatch]:
        self.sync(conn)
        min_cosine = self.calibration.min_cosine(min_relevance)
        query = self.query_vector(text)
        if not filters.restricts:
            # No liveness query here: deleting a highlight (or its source) deletes its vector
            # in the same transaction (migration 0012), and `sync` above has applied every
            # vector change committed so far, this process's and others'. The keyword side's
            # SQL is the search's one liveness check.
            kept = self.matrix.top(query, min_cosine, limit)
        else:
            kept = self._filtered_top(conn, query, filters, min_cosine, limit)
        similarities = self.calibration.similarities([cosine for _, cosine in kept])
        # Up to 1,000 matches: tuple.__new__ skips the named tuple's Python-level __new__.
        new_match = tuple.__new__
        return [
            new_match(SemanticMatch, (seq, cosine, similarity))
            for (seq, cosine), similarity in zip(kept, similarities, strict=True)
        ]

    def _filtered_top(
        self,
        conn: sqlite3.Connection,
        query: np.ndarray,
        filters: Filters,
        min_cosine: float,
        limit: int,
    ) -> list[tuple[int, float]]:
        """The best `limit` matches that pass the filters.

        Candidates are checked against the filters in growing windows down the cosine
        ranking, so a broad filter costs one small check and a narrow one reads further;
        listing every admitted highlight up front costs far more at 100k.
        """
        window = max(4 * limit, 1000)
        while True:
            scored = self.matrix.top(query, min_cosine, window)
            admitted = admitted_seqs(conn, filters, [seq for seq, _ in scored])
            kept = [(seq, cosine) for seq, cosine in scored if seq in admitted]
            if len(kept) >= limit or len(scored) < window:
                return kept[:limit]
            window *= 4

    def verify(
        self, conn: sqlite3.Connection, text: str, matches: list[SemanticMatch]
    ) -> dict[int, float]:
        judged = matches[:VERIFY_LIMIT]
        texts = {
            item.seq: item.text for item in embedding_rows.live_texts(conn, [m.seq for m in judged])
        }
        judged = [match for match in judged if match.seq in texts]
        probabilities = self.verifier.probabilities(
            text, [texts[match.seq] for match in judged], [match.cosine for match in judged]
        )
        return {match.seq: p for match, p in zip(judged, probabilities, strict=True)}


def _codes_current(
    conn: sqlite3.Connection,
    saved: compact_file.Stamp,
    now: compact_file.Stamp,
    tables: VectorTables,
) -> bool:
    """Whether codes saved at `saved` plus the logged changes since are the vectors `now`:
    the same model, and every change since still in the log (or none, and as many vectors)."""
    if (saved.model, saved.dimensions) != (now.model, now.dimensions) or saved.change > now.change:
        return False
    if saved.change == now.change:
        return saved.vectors == now.vectors
    if now.change - saved.change > CODES_CATCH_UP:
        return False
    oldest = embedding_rows.oldest_change(conn, tables)
    return oldest is not None and oldest <= saved.change + 1
