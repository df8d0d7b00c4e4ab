"""The compact index of a very large library: codes in memory, exact cosines of a short list
read back from the stored vectors, and the same ranking as the float32 matrix."""

from __future__ import annotations

import numpy as np
from evaluation import LabelledLibrary
from synthetic_vectors import unit_rows

from screvi_mcp.local.search.compact_matrix import CompactMatrix
from screvi_mcp.local.search.vectors import Matrix, VectorMatrix

DIMENSIONS = 384


class Store:
    """Stands in for the SQLite table the short list is read from."""

    def __init__(self) -> None:
        self.rows: dict[int, np.ndarray] = {}
        self.fetched: list[int] = []

    def put(self, seqs: list[int], vectors: Matrix) -> None:
        self.rows.update(zip(seqs, vectors, strict=True))

    def fetch(self, seqs: list[int]) -> tuple[list[int], Matrix]:
        self.fetched = list(seqs)
        found = [seq for seq in seqs if seq in self.rows]
        stacked = np.array([self.rows[seq] for seq in found], dtype=np.float32)
        return found, stacked.reshape(len(found), DIMENSIONS)


def _pair(rows: np.ndarray, seqs: list[int]) -> tuple[CompactMatrix, VectorMatrix, Store]:
    store = Store()
    store.put(seqs, rows)
    compact, exact = CompactMatrix(DIMENSIONS, store.fetch, capacity=16), VectorMatrix(DIMENSIONS)
    exact.set_sign_from_rows(10**12)
    compact.extend(seqs[:100], rows[:100])  # grows past its capacity
    compact.extend(seqs[100:], rows[100:])
    exact.replace_all(seqs, rows)
    return compact, exact, store


def test_with_every_row_a_candidate_the_ranking_is_the_exact_one() -> None:
    rng = np.random.default_rng(11)
    rows = unit_rows(rng, 3000)
    compact, exact, _ = _pair(rows, list(range(5, 3005)))
    compact.min_candidates = 10**6
    for query in (rows[7], rows[2000], unit_rows(rng, 1)[0]):
        for floor, limit in ((-1.0, 50), (0.3, 1000), (0.9, 10)):
            got, want = compact.top(query, floor, limit), exact.top(query, floor, limit)
            assert [seq for seq, _ in got] == [seq for seq, _ in want]
            np.testing.assert_allclose([c for _, c in got], [c for _, c in want], atol=1e-5)


def test_only_the_short_list_is_read_back() -> None:
    rng = np.random.default_rng(12)
    rows = unit_rows(rng, 5000)
    compact, exact, store = _pair(rows, list(range(5000)))
    compact.min_candidates = 0
    compact.candidates_per_result = 20
    got = compact.top(rows[42], 0.0, 100)  # 2,000 sign candidates, 356 read back
    assert len(store.fetched) == 100 + 256  # RESCORE_EXTRA
    assert got[0][0] == 42
    assert [seq for seq, _ in got[:3]] == [seq for seq, _ in exact.top(rows[42], 0.0, 3)]


def test_writes_keep_the_codes_in_step() -> None:
    rng = np.random.default_rng(13)
    rows = unit_rows(rng, 4000)
    compact, _, store = _pair(rows[:3000], list(range(3000)))
    compact.min_candidates = 0
    removed = [int(seq) for seq in rng.choice(3000, 300, replace=False)]
    edited = [seq for seq in range(0, 3000, 97) if seq not in removed]
    new_vectors = unit_rows(rng, len(edited))
    compact.remove(removed)
    for seq in removed:
        del store.rows[seq]
    compact.upsert(list(range(3000, 4000)), rows[3000:])
    compact.upsert(edited, new_vectors)
    store.put(list(range(3000, 4000)), rows[3000:])
    store.put(edited, new_vectors)
    assert len(compact) == 4000 - 300 and 3999 in compact and removed[0] not in compact
    for seq, vector in [(3500, rows[3500]), (2999 if 2999 not in removed else 1, rows[1])]:
        assert compact.top(vector, 0.0, 20)[0][0] in (seq, 1)
    for seq, vector in zip(edited[:5], new_vectors, strict=False):
        assert compact.top(vector, 0.0, 20)[0][0] == seq
    for seq in removed[:5]:
        assert seq not in {s for s, _ in compact.top(rows[seq], 0.0, 50)}


def test_a_library_opened_compactly_ranks_as_the_float_matrix(labelled: LabelledLibrary) -> None:
    """The labelled library reopened with the compact threshold at 0: every labelled query's
    semantic ranking is the float32 one (each row a candidate at this size), with the float
    vectors of the short list read from SQLite."""
    from labelled_set import QUERIES_BY_HALF

    from screvi_mcp.local.search.filters import Filters
    from screvi_mcp.local.search.registry import semantic_index_for

    index = semantic_index_for(labelled.library)
    assert index is not None
    conn = labelled.library.connection()
    queries = [q.q for half in QUERIES_BY_HALF.values() for q in half]
    want = [index.semantic_ranking(conn, q, Filters(), 0.0, 1000) for q in queries]
    threshold = index.compact_from_rows
    index.compact_from_rows = 0
    try:
        index.load()
        assert isinstance(index.matrix, CompactMatrix)
        index.matrix.min_candidates = 10**6
        for q, expected in zip(queries, want, strict=True):
            got = index.semantic_ranking(conn, q, Filters(), 0.0, 1000)
            assert [m.seq for m in got] == [m.seq for m in expected]
            np.testing.assert_allclose(
                [m.cosine for m in got], [m.cosine for m in expected], atol=1e-5
            )
    finally:
        index.compact_from_rows = threshold
        index.load()
    assert isinstance(index.matrix, VectorMatrix)
