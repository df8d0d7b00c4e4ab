"""Sign codes of the vector matrix: one bit per component, scanned first to pick candidates.

At 100k x 384 the float32 matrix is 154 MB, and scanning it in full for every query is bound
by memory bandwidth (17 ms idle here, and what a loaded machine fights over). One bit per
component, its sign, is 48 bytes a row (4.8 MB at 100k, 1/32 of the floats): the Hamming
distance between two rows' signs estimates their angle (Charikar's SimHash), and
`numpy.bitwise_count` over uint64 words counts it in about a millisecond at 100k.

The distances only choose candidates; `vectors.VectorMatrix.top` re-scores those in float32,
so the cosines returned, and the order of what is returned, are the float32 ones. What the
first pass can change is membership far down the list: measured on the benchmark's 100k
library (2026-11-23, 60 queries), the nearest 10,000 rows by sign held every one of the exact
top 100 in every query, and on average 99.5% of the exact top 1,000 (the candidates a search
fuses); `test_sign_scan.py` and the benchmark check the same on real libraries.

Codes are stored word-major (one contiguous uint64 array per 64 components) so that each
XOR and popcount runs over contiguous memory: row-major was 10-20x slower.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from screvi_mcp.local.search.seq_rows import grown_capacity

Floats = npt.NDArray[np.float32]
Rows = npt.NDArray[np.intp]
_WORD_BITS = 64
# Rows whose distances are summed at a time (their 64-bit words and counts fit in L2).
DISTANCE_BLOCK = 16384


class SignCodes:
    """Sign bits of rows 0..n of a matrix, word-major, with spare capacity."""

    def __init__(self, dimensions: int, capacity: int = 1024) -> None:
        self.dimensions = dimensions
        self.words = -(-dimensions // _WORD_BITS)
        self._codes = np.zeros((self.words, max(capacity, 1)), dtype=np.uint64)

    @property
    def capacity(self) -> int:
        return int(self._codes.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self._codes.nbytes)

    def reserve(self, rows: int) -> None:
        if rows <= self.capacity:
            return
        capacity = grown_capacity(self.capacity, rows)
        codes = np.zeros((self.words, capacity), dtype=np.uint64)
        codes[:, : self.capacity] = self._codes
        self._codes = codes

    def set_rows(self, first: int, vectors: Floats) -> None:
        """Codes for rows first..first+len(vectors)."""
        self.reserve(first + vectors.shape[0])
        self._codes[:, first : first + vectors.shape[0]] = self._pack(vectors).T

    def rows(self, count: int) -> npt.NDArray[np.uint64]:
        """A view of rows 0..count's codes (words x count): saved and read by compact_file."""
        return self._codes[:, :count]

    def copy_row(self, source: int, target: int) -> None:
        self._codes[:, target] = self._codes[:, source]

    def distances(self, query: Floats, size: int) -> npt.NDArray[np.uint16]:
        """Hamming distances between the query's signs and those of rows 0..size."""
        packed = self._pack(query.reshape(1, -1))[0]
        total = np.zeros(size, dtype=np.uint16)
        # A block of rows at a time into buffers that stay in L2: over whole columns each
        # word wrote and read back two temporaries of the column's size (8 MB each at 1M
        # rows); measured at 1M x 768 under load, 77 ms against 103.
        xored = np.empty(min(size, DISTANCE_BLOCK), dtype=np.uint64)
        counts = np.empty(xored.size, dtype=np.uint8)
        for first in range(0, size, DISTANCE_BLOCK):
            last = min(first + DISTANCE_BLOCK, size)
            acc, x, c = total[first:last], xored[: last - first], counts[: last - first]
            for word in range(self.words):
                np.bitwise_xor(self._codes[word, first:last], packed[word], out=x)
                np.bitwise_count(x, out=c)
                np.add(acc, c, out=acc)
        return total

    def nearest(self, query: Floats, size: int, count: int) -> Rows:
        """Rows of the `count` smallest distances (ties at the cut taken in row order),
        ascending by row: a gentler gather for the re-score."""
        distances = self.distances(query, size)
        if count >= size:
            return np.arange(size)
        # The cut is the count-th smallest distance: a partition of the uint16 distances
        # finds it (0.5 ms at 1M rows, where a histogram by bincount took 12; argpartition,
        # which returns indices, is slow on so many ties). Rows at the cut are then taken
        # in row order.
        cut = int(np.partition(distances, count - 1)[count - 1])
        below = np.flatnonzero(distances < cut)
        at_cut = np.flatnonzero(distances == cut)[: count - below.size]
        rows: Rows = np.sort(np.concatenate((below, at_cut)))
        return rows

    def _pack(self, vectors: Floats) -> npt.NDArray[np.uint64]:
        """Rows of sign bits as uint64 words (padding bits 0 in every row and the query)."""
        bits = np.packbits(vectors > 0, axis=1)
        padded = np.zeros((vectors.shape[0], self.words * 8), dtype=np.uint8)
        padded[:, : bits.shape[1]] = bits
        return padded.view(np.uint64)
