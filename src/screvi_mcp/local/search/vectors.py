"""The in-memory vector index: a float32 matrix, scanned brute force, with compact copies.

A full float32 scan reads the whole matrix per query (154 MB at 100k x 384) and is bound by
memory bandwidth. From `SIGN_FROM_ROWS` rows a query first compares sign codes
(`sign_scan`: one bit per component) and re-scores the nearest `SIGN_CANDIDATES` per result
in float32; from `INT8_FROM_ROWS` it scans the int8 copy (`int8_scan`: a quarter of the
bytes, with a rounding bound) and re-scores the best with a margin. Either way the cosines
returned are the float32 ones and the order is the float32 order of the candidates; the
sign pass can miss rows deep in a long list (measured in `sign_scan`), the int8 pass only
rows moved from beyond twice the limit into it. Small matrices are scanned in float32
alone. Rows live in a buffer with spare capacity, so adding a highlight does not copy the
whole matrix; removal moves the last row into the hole.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt

from screvi_mcp.local.search.int8_scan import Int8Codes, score_error_bound
from screvi_mcp.local.search.seq_rows import SeqRows
from screvi_mcp.local.search.sign_scan import SignCodes

Matrix = npt.NDArray[np.float32]
SeqArray = npt.NDArray[np.int64]

# From this many rows queries scan the int8 copy first. Measured here (2026-11-23, 2 shared
# cores under load 5-12, two runs): at 100k the int8 scan alone was 0.64x and 0.99x the
# float32 one, and whole searches were not faster (1.07-1.64x idle, 1.14-1.21x loaded), so
# libraries of 100k keep the float32 scan and its 37 MiB less memory. DESIGN.md measured
# onnxruntime's int8 product at 0.47x the float32 one at 1M rows: the copy pays from about
# there, where the float32 matrix (1.5 GB) is read in full for every query.
INT8_FROM_ROWS = 500_000
# Candidates re-scored in float32: twice the limit, and at least this many more. Rows beyond
# twice the limit are far below it in cosine compared with int8's rounding (about 0.0005).
RESCORE_EXTRA = 256
# From this many rows (and below INT8_FROM_ROWS) queries scan the sign codes first
# (`sign_scan`: 1 bit a component) and re-score the nearest `SIGN_CANDIDATES` x limit rows
# in float32. Measured at 100k (2026-11-23): the sign pass plus re-score took ~3 ms where
# the float32 scan took 17 ms, and the candidates held the exact top 100 in every query and
# 99.5% of the exact top 1,000 on average. Below this size the float32 scan is a few
# milliseconds and stays exact.
SIGN_FROM_ROWS = 50_000
SIGN_CANDIDATES = 10
SIGN_MIN_CANDIDATES = 1000


# Candidate rows are gathered for the re-score a slice at a time, into a float32 buffer of
# this many bytes that stays in the core's L2 cache (512 x 384 float32 = 768 KiB would not,
# 256 rows = 384 KiB do). Gathering all 10,000 candidates at once wrote a 15 MB copy and
# read it back from memory; at 100k this halved the re-score's time at best (2.6 ms against
# 6.5, 2026-11-23). At 768-d the same bytes are 128 rows: 256 (768 KiB) took 6.5-6.9 ms of
# thread CPU per 100k query where 128 took 5.5-6.3 (2026-11-27, identical scores).
GATHER_BYTES = 384 * 1024


def gather_rows(dimensions: int) -> int:
    """Rows of `dimensions` float32 components per slice of a gather (GATHER_BYTES)."""
    return max(GATHER_BYTES // (4 * dimensions), 16)


def _gathered_scores(
    vectors: Matrix, rows: npt.NDArray[np.intp], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """`vectors[rows] @ query`, gathered a slice at a time.

    einsum, not BLAS: for a few thousand rows OpenBLAS's threads cost more than they save,
    and under load their hand-offs took 20x longer (measured). Each slice is the same
    einsum as over the whole gather, so the scores are bit for bit the same.
    """
    scores: npt.NDArray[np.float32] = np.empty(rows.size, dtype=np.float32)
    step = gather_rows(vectors.shape[1])
    buffer: Matrix = np.empty((min(step, rows.size), vectors.shape[1]), dtype=np.float32)
    for start in range(0, rows.size, step):
        part = rows[start : start + step]
        block = buffer[: part.size]
        # mode="clip": with the default "raise", numpy gathers into a hidden temporary and
        # copies it into `out` (the rows are in range: they came from the sign codes).
        np.take(vectors, part, axis=0, out=block, mode="clip")
        np.einsum("ij,j->i", block, query, out=scores[start : start + part.size])
    return scores


class SharedLock:
    """Many readers or one writer: concurrent searches scan together; a write waits for
    the scans in progress and holds new ones off while it moves rows."""

    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None
        self._depth = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._condition:
            while self._writer is not None:
                self._condition.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                if not self._readers:
                    self._condition.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._condition:
            if self._writer != me:  # re-entrant for the writer
                while self._writer is not None or self._readers:
                    self._condition.wait()
                self._writer = me
            self._depth += 1
        try:
            yield
        finally:
            with self._condition:
                self._depth -= 1
                if not self._depth:
                    self._writer = None
                    self._condition.notify_all()


class VectorMatrix(SeqRows):
    _ROW_BUFFERS = ("_vectors", "_seqs")

    def __init__(self, dimensions: int, capacity: int = 1024) -> None:
        self.dimensions = dimensions
        self._vectors: Matrix = np.zeros((max(capacity, 1), dimensions), dtype=np.float32)
        self._seqs: SeqArray = np.zeros(max(capacity, 1), dtype=np.int64)
        self._row_of: dict[int, int] = {}
        self._size = 0
        self._lock = SharedLock()
        self.int8_from_rows = INT8_FROM_ROWS
        self._codes: Int8Codes | None = None  # built once the matrix reaches int8_from_rows
        self.sign_from_rows = SIGN_FROM_ROWS
        # Rows re-scored after the sign pass: this many per result asked for, at least the
        # minimum (attributes so that tests can tighten them on a small library).
        self.sign_candidates = SIGN_CANDIDATES
        self.sign_min_candidates = SIGN_MIN_CANDIDATES
        self._signs: SignCodes | None = None  # built once the matrix reaches sign_from_rows

    def __len__(self) -> int:
        return self._size

    def __contains__(self, seq: int) -> bool:
        return seq in self._row_of

    def upsert(self, seqs: list[int], vectors: Matrix) -> None:
        if vectors.shape[0] != len(seqs) or (seqs and vectors.shape[1] != self.dimensions):
            raise ValueError("one vector of the index's width per seq")
        with self._lock.writing():
            self._reserve(self._size + len(seqs))
            for seq, vector in zip(seqs, vectors, strict=True):
                row = self._row_for(seq)
                self._vectors[row] = vector
                if self._codes is not None:
                    self._codes.set_row(row, vector)
                if self._signs is not None:
                    self._signs.set_rows(row, vector.reshape(1, -1))
            self._update_codes()

    def remove(self, seqs: list[int]) -> None:
        with self._lock.writing():
            self._drop_rows(seqs, self._move_row)

    def _move_row(self, source: int, target: int) -> None:
        self._vectors[target] = self._vectors[source]
        if self._codes is not None:
            self._codes.copy_row(source, target)
        if self._signs is not None:
            self._signs.copy_row(source, target)

    def replace_all(self, seqs: list[int], vectors: Matrix) -> None:
        """Become exactly these rows, in one copy (opening a 100k library must be quick)."""
        if vectors.shape != (len(seqs), self.dimensions):
            raise ValueError("one vector of the index's width per seq")
        capacity = max(1024, 1 << max(len(seqs) - 1, 1).bit_length())
        buffer: Matrix = np.zeros((capacity, self.dimensions), dtype=np.float32)
        buffer[: len(seqs)] = vectors
        seq_buffer: SeqArray = np.zeros(capacity, dtype=np.int64)
        seq_buffer[: len(seqs)] = seqs
        with self._lock.writing():
            self._vectors, self._seqs = buffer, seq_buffer
            self._row_of = {seq: row for row, seq in enumerate(seqs)}
            self._size = len(seqs)
            self._codes = None
            self._signs = None
            self._update_codes()

    def clear(self) -> None:
        with self._lock.writing():
            self._row_of.clear()
            self._size = 0
            self._codes = None
            self._signs = None

    @property
    def scans_int8(self) -> bool:
        """Whether queries scan the int8 copy first (the matrix is big enough)."""
        return self._codes is not None and self._size >= self.int8_from_rows

    def set_int8_from_rows(self, rows: int) -> None:
        """Scan through the int8 copy from this many rows on (tests and benchmarks; a huge
        value is the float32-only baseline). A copy already built is kept, so switching
        back and forth costs nothing."""
        with self._lock.writing():
            self.int8_from_rows = rows
            self._update_codes()

    @property
    def scans_signs(self) -> bool:
        """Whether queries scan the sign codes first (and not the int8 copy)."""
        return (
            self._signs is not None and self.sign_from_rows <= self._size and not (self.scans_int8)
        )

    def set_sign_from_rows(self, rows: int) -> None:
        """Scan through the sign codes from this many rows on (tests and benchmarks; a huge
        value is the exact float32 baseline). Codes already built are kept."""
        with self._lock.writing():
            self.sign_from_rows = rows
            self._update_codes()

    def _update_codes(self) -> None:
        """Build the int8 copy and the sign codes once the matrix is big enough for them to
        pay (writer held)."""
        if self._codes is None and self._size >= self.int8_from_rows:
            codes = Int8Codes(self.dimensions)
            codes.set_rows(0, self._vectors[: self._size])
            self._codes = codes
        if self._signs is None and self._size >= self.sign_from_rows:
            signs = SignCodes(self.dimensions, self._vectors.shape[0])
            # A block at a time: packing the whole matrix at once holds a boolean copy of
            # it (a quarter of its size) on top.
            for first in range(0, self._size, 8192):
                signs.set_rows(first, self._vectors[first : min(first + 8192, self._size)])
            self._signs = signs

    def top(
        self,
        query: npt.NDArray[np.float32],
        min_cosine: float,
        limit: int,
        allowed: SeqArray | None = None,
    ) -> list[tuple[int, float]]:
        """(seq, cosine) of the best rows at or above `min_cosine`, best first.

        `allowed`, when given, restricts the scan to those seqs (the filters' answer).
        """
        query = np.ascontiguousarray(query, dtype=np.float32)
        with self._lock.reading():
            size = self._size
            pool = 2 * limit + RESCORE_EXTRA
            candidates = max(self.sign_candidates * limit, self.sign_min_candidates)
            use_int8 = self._codes is not None and size >= self.int8_from_rows and size > pool
            if use_int8 and self._codes is not None:
                scores, seqs = self._rescored_candidates(
                    self._codes, query, min_cosine, pool, allowed
                )
            elif (
                self._signs is not None
                and size >= self.sign_from_rows
                and 2 * candidates <= size
                and allowed is None
            ):
                rows = self._signs.nearest(query, size, candidates)
                scores = _gathered_scores(self._vectors, rows, query)
                seqs = self._seqs[rows]
            else:
                scores = self._vectors[:size] @ query
                seqs = self._seqs[:size].copy()
                if allowed is not None:
                    keep = np.isin(seqs, allowed)
                    scores, seqs = scores[keep], seqs[keep]
        passing = np.flatnonzero(scores >= min_cosine)
        if passing.size > limit:
            best = np.argpartition(-scores[passing], limit - 1)[:limit]
            passing = passing[best]
        order = passing[np.lexsort((seqs[passing], -scores[passing]))]
        return list(zip(seqs[order].tolist(), scores[order].tolist(), strict=True))

    def _rescored_candidates(
        self,
        codes: Int8Codes,
        query: npt.NDArray[np.float32],
        min_cosine: float,
        pool: int,
        allowed: SeqArray | None,
    ) -> tuple[npt.NDArray[np.float32], SeqArray]:
        """The best `pool` rows by int8 score, with their float32 cosines (reader held)."""
        size = self._size
        approx, query_step = codes.scores(query, size)
        # A row can reach `min_cosine` in float32 only if its int8 score is within the
        # rounding bound of it: the floor is applied exactly after the re-score.
        bound = score_error_bound(query_step, codes.largest_step(size), self.dimensions)
        candidates = np.flatnonzero(approx >= min_cosine - bound)
        if allowed is not None:
            candidates = candidates[np.isin(self._seqs[candidates], allowed)]
        if candidates.size > pool:
            best = np.argpartition(-approx[candidates], pool - 1)[:pool]
            candidates = np.sort(candidates[best])  # ascending rows: a gentler gather
        scores: npt.NDArray[np.float32] = self._vectors[candidates] @ query
        return scores, self._seqs[candidates].copy()
