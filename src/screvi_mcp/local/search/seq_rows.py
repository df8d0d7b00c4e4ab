"""The seq-to-row bookkeeping the in-memory vector indexes share.

`VectorMatrix` (float32 rows) and `CompactMatrix` (sign and int8 codes) keep their rows
packed: rows `0 .. _size - 1` hold the live seqs, `_seqs[row]` names a row's seq and
`_row_of` maps back. A new seq takes the next row; a removed one's row is filled by the
last row, so a scan never meets a hole. What differs is only what a row holds, so each
index copies its own codes (`move`) and this mixin keeps the seqs straight, and grows
every per-row buffer the same way (`_reserve`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt


def grown_capacity(capacity: int, needed: int) -> int:
    """Room for `needed` rows, doubling from `capacity`: adding a row copies nothing until
    the buffer is full, and the copies over a library's growth add up to one more."""
    capacity = max(capacity, 1)
    while capacity < needed:
        capacity *= 2
    return capacity


class SeqRows:
    """Mixin: the row of each seq, and buffers with one row per seq (`_ROW_BUFFERS`, first
    axis rows) that `_reserve` grows together.

    Callers hold the index's write lock.
    """

    _ROW_BUFFERS: tuple[str, ...] = ("_seqs",)
    _seqs: npt.NDArray[np.int64]
    _row_of: dict[int, int]
    _size: int

    def _reserve(self, needed: int) -> None:
        """Room for `needed` rows in every row buffer, the live rows copied over."""
        capacity = self._seqs.shape[0]
        if needed <= capacity:
            return
        capacity = grown_capacity(capacity, needed)
        for name in self._ROW_BUFFERS:
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[: self._size] = old[: self._size]
            setattr(self, name, new)
        self._grown(capacity)

    def _grown(self, capacity: int) -> None:
        """Called after `_reserve` grew the row buffers: room for codes kept elsewhere."""

    def _row_for(self, seq: int) -> int:
        """The row of `seq`, the next free one if it is new (capacity already reserved)."""
        row = self._row_of.get(seq)
        if row is None:
            row = self._size
            self._size += 1
            self._row_of[seq] = row
            self._seqs[row] = seq
        return row

    def _drop_rows(self, seqs: Iterable[int], move: Callable[[int, int], None]) -> None:
        """Forget `seqs` (unknown ones are skipped); `move(last, row)` copies the last row's
        codes into each hole before the seqs are updated."""
        for seq in seqs:
            row = self._row_of.pop(seq, None)
            if row is None:
                continue
            last = self._size - 1
            if row != last:
                move(last, row)
                moved = int(self._seqs[last])
                self._seqs[row] = moved
                self._row_of[moved] = row
            self._size = last
