"""The in-memory vector index: one float32 matrix, scanned brute force.

At 100k x 384 a full scan is one matrix-vector product, bound by memory bandwidth (150 MB
read: about 30 ms on these 2-core machines), which keeps search interactive without an
ANN structure, and exact besides. Rows live in a
buffer with spare capacity, so adding a highlight does not copy the whole matrix; removal
moves the last row into the hole.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
SeqArray = npt.NDArray[np.int64]


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


class VectorMatrix:
    def __init__(self, dimensions: int, capacity: int = 1024) -> None:
        self.dimensions = dimensions
        self._vectors: Matrix = np.zeros((max(capacity, 1), dimensions), dtype=np.float32)
        self._seqs: SeqArray = np.zeros(max(capacity, 1), dtype=np.int64)
        self._row_of: dict[int, int] = {}
        self._size = 0
        self._lock = SharedLock()

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
                row = self._row_of.get(seq)
                if row is None:
                    row = self._size
                    self._size += 1
                    self._row_of[seq] = row
                    self._seqs[row] = seq
                self._vectors[row] = vector

    def remove(self, seqs: list[int]) -> None:
        with self._lock.writing():
            for seq in seqs:
                row = self._row_of.pop(seq, None)
                if row is None:
                    continue
                last = self._size - 1
                if row != last:
                    moved = int(self._seqs[last])
                    self._vectors[row] = self._vectors[last]
                    self._seqs[row] = moved
                    self._row_of[moved] = row
                self._size = last

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

    def clear(self) -> None:
        with self._lock.writing():
            self._row_of.clear()
            self._size = 0

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
        with self._lock.reading():
            size = self._size
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
        return [(int(seqs[i]), float(scores[i])) for i in order]

    def _reserve(self, needed: int) -> None:
        capacity = self._vectors.shape[0]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        vectors = np.zeros((capacity, self.dimensions), dtype=np.float32)
        vectors[: self._size] = self._vectors[: self._size]
        seqs = np.zeros(capacity, dtype=np.int64)
        seqs[: self._size] = self._seqs[: self._size]
        self._vectors, self._seqs = vectors, seqs
