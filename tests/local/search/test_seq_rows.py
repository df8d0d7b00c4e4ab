"""The seq-to-row bookkeeping both in-memory indexes share (`seq_rows.SeqRows`): after any
mix of inserts, replacements and removals each live seq still finds its own vector, through
every pass that reads the rows (float32, int8 and sign codes)."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_vectors import unit_rows

from screvi_mcp.local.search.compact_matrix import CompactMatrix
from screvi_mcp.local.search.seq_rows import SeqRows
from screvi_mcp.local.search.vectors import Matrix, VectorMatrix

DIMENSIONS = 384


class Letters(SeqRows):
    """The smallest index: a row holds one letter."""

    def __init__(self) -> None:
        self._seqs = np.zeros(8, dtype=np.int64)
        self._row_of: dict[int, int] = {}
        self._size = 0
        self.held = [""] * 8

    def put(self, seq: int, letter: str) -> None:
        self.held[self._row_for(seq)] = letter

    def drop(self, *seqs: int) -> None:
        self._drop_rows(seqs, self._move)

    def _move(self, source: int, target: int) -> None:
        self.held[target] = self.held[source]

    def live(self) -> dict[int, str]:
        return {int(self._seqs[row]): self.held[row] for row in range(self._size)}


def test_rows_stay_packed_and_each_seq_keeps_its_own_row() -> None:
    index = Letters()
    for seq, letter in ((10, "a"), (11, "b"), (12, "c"), (13, "d")):
        index.put(seq, letter)
    index.put(11, "B")  # a known seq keeps its row
    assert index._size == 4 and index._row_of[11] == 1
    index.drop(10, 99, 13)  # the first row's hole is filled by the last; 99 was never there
    assert index.live() == {11: "B", 12: "c"}
    assert sorted(index._row_of.values()) == [0, 1]
    assert all(index._seqs[row] == seq for seq, row in index._row_of.items())
    index.put(14, "e")
    assert index.live() == {11: "B", 12: "c", 14: "e"}


class Store:
    """Stands in for the SQLite table CompactMatrix reads its short list from."""

    def __init__(self) -> None:
        self.rows: dict[int, np.ndarray] = {}

    def fetch(self, seqs: list[int]) -> tuple[list[int], Matrix]:
        found = [seq for seq in seqs if seq in self.rows]
        stacked = np.array([self.rows[seq] for seq in found], dtype=np.float32)
        return found, stacked.reshape(len(found), DIMENSIONS)


def _index(scan: str, store: Store) -> VectorMatrix | CompactMatrix:
    """An index whose answers come through `scan`'s codes, so a code left in the wrong row
    loses its seq's own vector."""
    if scan.startswith("compact"):
        compact = CompactMatrix(DIMENSIONS, store.fetch, capacity=16)
        # signs: 20 candidates from the sign codes; int8: every row a candidate, the int8
        # codes choose the short list.
        compact.min_candidates = 0 if scan == "compact-signs" else 10**6
        return compact
    matrix = VectorMatrix(DIMENSIONS, capacity=16)
    matrix.set_int8_from_rows(50 if scan == "float32-int8" else 10**12)
    matrix.set_sign_from_rows(50)
    matrix.sign_min_candidates = 0
    return matrix


@pytest.mark.parametrize("scan", ["float32-int8", "float32-signs", "compact-int8", "compact-signs"])
def test_after_upserts_and_removals_each_seq_finds_its_own_vector(scan: str) -> None:
    rng = np.random.default_rng(5)
    store = Store()
    matrix = _index(scan, store)
    seqs = list(range(1000, 2500))
    rows = unit_rows(rng, len(seqs))
    matrix.upsert(seqs, rows)
    store.rows.update(zip(seqs, rows, strict=True))
    gone = [seq for seq in seqs if seq % 3 == 0]  # holes everywhere, the last rows moved into them
    matrix.remove(gone)
    for seq in gone:
        del store.rows[seq]
    again = [seq for seq in seqs[:300] if seq % 3][:100]  # live ones, replaced in place
    fresh = unit_rows(rng, len(again))
    matrix.upsert(again, fresh)
    store.rows.update(zip(again, fresh, strict=True))

    assert len(matrix) == len(store.rows)
    assert all(seq in matrix for seq in store.rows) and not any(seq in matrix for seq in gone)
    for seq in list(store.rows)[::5]:
        top = matrix.top(store.rows[seq], -1.0, 1)
        assert top[0][0] == seq and top[0][1] == pytest.approx(1.0, abs=1e-4)
