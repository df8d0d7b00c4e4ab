"""The vector index of a very large library: compact codes in memory, exact cosines from disk.

A million highlights of all-mpnet-base-v2 (768 float32 components) are 3 GB of vectors: more
than a reader's machine should hold for search. From `COMPACT_FROM_ROWS` stored vectors the
index keeps only

- sign codes (`sign_scan`: 1 bit a component, 96 MB at 1M x 768), compared in full to
  choose `candidates` rows;
- int8 codes, row-major (1 byte a component and a scale per row, 768 MB at 1M x 768), that
  re-score those candidates to a short list of `limit + RESCORE_EXTRA`;

and reads the float32 vectors of the short list back from SQLite, where they are stored
anyway, for the exact cosines and order. The codes are saved beside the library and read
back in one go when it opens (compact_file.py). What is returned is therefore exact float32 cosines
in float32 order; what the first two passes can change is which rows reach the short list
(the benchmark's `million` section reports the recall against the exact scan).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np
import numpy.typing as npt

from screvi_mcp.local.search import compact_file
from screvi_mcp.local.search.int8_scan import quantize
from screvi_mcp.local.search.seq_rows import SeqRows
from screvi_mcp.local.search.sign_scan import SignCodes
from screvi_mcp.local.search.vectors import (
    RESCORE_EXTRA,
    Matrix,
    SeqArray,
    SharedLock,
    gather_rows,
)

# Libraries with at least this many stored vectors open compactly (at 500k x 768 the
# float32 matrix alone is 1.5 GB). Smaller ones keep the float32 matrix: exact and faster.
COMPACT_FROM_ROWS = 500_000
# Sign-pass candidates per result asked for (a search asks for 1,000: 20,000 rows, 2% of a
# million), and at least this many.
CANDIDATES_PER_RESULT = 20
MIN_CANDIDATES = 2000
# The short list read back from SQLite: this many rows per result asked for, plus
# RESCORE_EXTRA. The int8 score is within about 0.003 of the cosine (int8_scan.py), so a
# row of the exact top `limit` falls below the int8 top `limit + 256` only where 256 rows
# crowd within that of it; twice the limit read twice the rows (2,256 vectors, the largest
# part of the vector side at 1M) for a tail the `million` benchmark finds no better.
SHORT_LIST_FACTOR = 1

# Stored float32 vectors of the seqs asked for that still have one: (seqs, rows).
Fetch = Callable[[list[int]], tuple[list[int], Matrix]]


class CompactMatrix(SeqRows):
    """Sign and int8 codes of every row; float32 vectors only for a query's short list."""

    _ROW_BUFFERS = ("_codes", "_steps", "_seqs")

    def __init__(self, dimensions: int, fetch: Fetch, capacity: int = 1024) -> None:
        self.dimensions = dimensions
        self._fetch = fetch
        capacity = max(capacity, 1)
        self._signs = SignCodes(dimensions, capacity)
        self._codes: npt.NDArray[np.int8] = np.zeros((capacity, dimensions), dtype=np.int8)
        self._steps: npt.NDArray[np.float32] = np.zeros(capacity, dtype=np.float32)
        self._seqs: SeqArray = np.zeros(capacity, dtype=np.int64)
        self._row_of: dict[int, int] = {}
        self._size = 0
        self._lock = SharedLock()
        self.candidates_per_result = CANDIDATES_PER_RESULT
        self.min_candidates = MIN_CANDIDATES
        self.short_list_factor = SHORT_LIST_FACTOR

    def __len__(self) -> int:
        return self._size

    def __contains__(self, seq: int) -> bool:
        return seq in self._row_of

    @property
    def resident_bytes(self) -> int:
        """What the codes take in memory (the row map aside)."""
        return int(self._codes.nbytes + self._steps.nbytes + self._seqs.nbytes + self._signs.nbytes)

    def upsert(self, seqs: list[int], vectors: Matrix) -> None:
        if vectors.shape[0] != len(seqs) or (seqs and vectors.shape[1] != self.dimensions):
            raise ValueError("one vector of the index's width per seq")
        with self._lock.writing():
            self._reserve(self._size + len(seqs))
            for seq, vector in zip(seqs, vectors, strict=True):
                self._set_rows(self._row_for(seq), vector.reshape(1, -1))

    def extend(self, seqs: list[int], vectors: Matrix) -> None:
        """Append rows for seqs not in the matrix yet (opening: a block at a time)."""
        with self._lock.writing():
            first = self._size
            self._reserve(first + len(seqs))
            self._set_rows(first, vectors)
            self._seqs[first : first + len(seqs)] = seqs
            self._row_of.update(zip(seqs, range(first, first + len(seqs)), strict=True))
            self._size += len(seqs)

    def remove(self, seqs: list[int]) -> None:
        with self._lock.writing():
            self._drop_rows(seqs, self._move_row)

    def _move_row(self, source: int, target: int) -> None:
        self._codes[target] = self._codes[source]
        self._steps[target] = self._steps[source]
        self._signs.copy_row(source, target)

    def replace_all(self, seqs: list[int], vectors: Matrix) -> None:
        self.clear()
        self.extend(seqs, vectors)

    def clear(self) -> None:
        with self._lock.writing():
            self._row_of.clear()
            self._size = 0

    def save(self, path: Path, stamp: compact_file.Stamp) -> None:
        """Write the codes to `path` (compact_file.py), writes held off meanwhile."""
        with self._lock.reading():
            compact_file.save(path, stamp, self._arrays(self._size))

    def read(self, source: IO[bytes], count: int) -> bool:
        """Become the `count` rows of a codes file positioned after its header; False (and
        empty) when it ends early."""
        with self._lock.writing():
            self._size = 0
            self._row_of.clear()
            self._reserve(count)
            if not compact_file.read_into(source, self._arrays(count)):
                return False
            self._row_of = dict(zip(self._seqs[:count].tolist(), range(count), strict=True))
            self._size = count
            return True

    def _arrays(self, count: int) -> compact_file.Arrays:
        """Views of rows 0..count of every buffer."""
        return compact_file.Arrays(
            self._seqs[:count], self._steps[:count], self._codes[:count], self._signs.rows(count)
        )

    def top(
        self,
        query: npt.NDArray[np.float32],
        min_cosine: float,
        limit: int,
        allowed: SeqArray | None = None,
    ) -> list[tuple[int, float]]:
        """(seq, cosine) of the best rows at or above `min_cosine`, best first, as
        `VectorMatrix.top` (exact float32 cosines of the short list)."""
        query = np.ascontiguousarray(query, dtype=np.float32)
        with self._lock.reading():
            short = self._short_list(query, limit, allowed)
        seqs, vectors = self._fetch(short)
        if not seqs:
            return []
        scores: npt.NDArray[np.float32] = vectors @ query
        seq_array: SeqArray = np.asarray(seqs, dtype=np.int64)
        passing = np.flatnonzero(scores >= min_cosine)
        if passing.size > limit:
            passing = passing[np.argpartition(-scores[passing], limit - 1)[:limit]]
        order = passing[np.lexsort((seq_array[passing], -scores[passing]))]
        return list(zip(seq_array[order].tolist(), scores[order].tolist(), strict=True))

    def _short_list(
        self, query: npt.NDArray[np.float32], limit: int, allowed: SeqArray | None
    ) -> list[int]:
        """Seqs of the best `short_list_factor x limit + RESCORE_EXTRA` rows by int8 score
        among the sign pass's candidates (reader held)."""
        size = self._size
        if allowed is not None:
            rows = np.flatnonzero(np.isin(self._seqs[:size], allowed))
        else:
            count = max(self.candidates_per_result * limit, self.min_candidates)
            rows = self._signs.nearest(query, size, count)
        pool = self.short_list_factor * limit + RESCORE_EXTRA
        if rows.size > pool:
            approx = self._int8_scores(rows, query)
            rows = rows[np.argpartition(-approx, pool - 1)[:pool]]
        return self._seqs[np.sort(rows)].tolist()

    def _int8_scores(
        self, rows: npt.NDArray[np.intp], query: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """Approximate cosines of `rows` from their int8 codes, a cached slice at a time."""
        scores: npt.NDArray[np.float32] = np.empty(rows.size, dtype=np.float32)
        # Slices whose float32 copy stays in L2 (vectors.GATHER_BYTES).
        step = gather_rows(self.dimensions)
        block = np.empty((min(step, rows.size), self.dimensions), dtype=np.int8)
        floats = np.empty(block.shape, dtype=np.float32)
        for start in range(0, rows.size, step):
            part = rows[start : start + step]
            np.take(self._codes, part, axis=0, out=block[: part.size], mode="clip")
            np.copyto(floats[: part.size], block[: part.size], casting="unsafe")
            np.einsum("ij,j->i", floats[: part.size], query, out=scores[start : start + part.size])
        scores *= self._steps[rows]
        return scores

    def _set_rows(self, first: int, vectors: Matrix) -> None:
        codes, steps = quantize(vectors)
        self._codes[first : first + vectors.shape[0]] = codes
        self._steps[first : first + vectors.shape[0]] = steps
        self._signs.set_rows(first, vectors)

    def _grown(self, capacity: int) -> None:
        self._signs.reserve(capacity)
