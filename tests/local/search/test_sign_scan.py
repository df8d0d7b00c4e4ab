"""The sign-code first pass: what it returns is the exact float32 scan's top, re-scored."""

from __future__ import annotations

import numpy as np
from evaluation import LabelledLibrary
from synthetic_vectors import unit_rows

from screvi_mcp.local.search.sign_scan import SignCodes
from screvi_mcp.local.search.vectors import SIGN_FROM_ROWS, VectorMatrix

DIMENSIONS = 384


def _pair(rows: np.ndarray, seqs: list[int]) -> tuple[VectorMatrix, VectorMatrix]:
    """The same rows twice: one scanned through its sign codes, one exactly."""
    signs, exact = VectorMatrix(DIMENSIONS), VectorMatrix(DIMENSIONS)
    exact.set_sign_from_rows(10**12)
    for matrix in (signs, exact):
        matrix.replace_all(seqs, rows)
    assert signs.scans_signs and not exact.scans_signs
    return signs, exact


def _assert_same_ranking(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    assert [seq for seq, _ in got] == [seq for seq, _ in want]
    np.testing.assert_allclose([c for _, c in got], [c for _, c in want], atol=1e-5)


def test_distances_count_differing_signs() -> None:
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((300, DIMENSIONS)).astype(np.float32)
    codes = SignCodes(DIMENSIONS, capacity=4)  # grows while rows are set
    codes.set_rows(0, rows[:100])
    codes.set_rows(100, rows[100:])
    query = rng.standard_normal(DIMENSIONS).astype(np.float32)
    want = ((rows > 0) != (query > 0)).sum(axis=1)
    np.testing.assert_array_equal(codes.distances(query, 300), want)
    nearest = codes.nearest(query, 300, 40)
    assert len(nearest) == 40
    assert want[nearest].max() <= np.sort(want)[39]  # the 40 smallest, ties cut in row order


def test_the_floor_is_applied_to_float32_cosines() -> None:
    rng = np.random.default_rng(3)
    rows = unit_rows(rng, SIGN_FROM_ROWS + 100)
    signs, exact = _pair(rows, list(range(rows.shape[0])))
    query = rows[123]
    cosines = rows @ query
    floor = float(np.sort(cosines)[-4] + np.sort(cosines)[-5]) / 2  # 4 rows pass
    got = signs.top(query, floor, 1000)
    _assert_same_ranking(got, exact.top(query, floor, 1000))
    assert len(got) == 4 and got[0][0] == 123


def test_writes_keep_the_sign_codes_in_step() -> None:
    """Upserts, edits and removals (which move the last row into the hole) change the codes
    with the rows: each row is found by its own vector (sign distance 0) with its float32
    cosine, an edited row by its new vector, and a removed row never."""
    rng = np.random.default_rng(5)
    rows = unit_rows(rng, SIGN_FROM_ROWS + 3000)
    base = SIGN_FROM_ROWS + 1000
    signs, exact = _pair(rows[:base], list(range(base)))
    removed = [int(seq) for seq in rng.choice(base, 500, replace=False)]
    extra = list(range(base, rows.shape[0]))
    edited = [int(seq) for seq in rng.choice(base, 300, replace=False) if seq not in removed]
    new_vectors = unit_rows(rng, len(edited))
    for matrix in (signs, exact):
        matrix.remove(removed)
        matrix.upsert(extra, rows[base:])
        matrix.upsert(edited, new_vectors)
    assert signs.scans_signs
    kept = [seq for seq in range(base) if seq not in set(removed) | set(edited)]
    probes = [(seq, rows[seq]) for seq in [*kept[-5:], *extra[:5], *extra[-5:]]]
    probes += [(seq, vector) for seq, vector in zip(edited[:5], new_vectors, strict=False)]
    for seq, vector in probes:
        got = signs.top(vector, 0.0, 50)
        assert got[0][0] == seq
        want = dict(exact.top(vector, -1.0, 10**6))
        np.testing.assert_allclose([c for _, c in got], [want[s] for s, _ in got], atol=1e-5)
        assert not {s for s, _ in got} & set(removed)
    for seq in removed[:5]:
        assert seq not in {s for s, _ in signs.top(rows[seq], 0.0, 50)}


def test_on_a_real_library_the_sign_pass_keeps_the_exact_top(labelled: LabelledLibrary) -> None:
    """The labelled set's passages embedded by MiniLM in a library file, searched with every
    labelled query through the signs at search's own ratio (10 candidates re-scored per
    result; here a third of the library, at 100k a tenth): the best match is the exact best
    for every query, the best 3 and 10 for nearly all; what differs are weak matches near
    the floor (the benchmark reports the overlap of the 1,000 candidates at 100k)."""
    from labelled_set import QUERIES_BY_HALF

    from screvi_mcp.local.search.registry import semantic_index_for

    index = semantic_index_for(labelled.library)
    matrix = index.matrix  # type: ignore[union-attr]
    queries = [q.q for half in QUERIES_BY_HALF.values() for q in half]
    vectors = [index.query_vector(q) for q in queries]  # type: ignore[union-attr]
    exact = [matrix.top(vector, 0.0, 10) for vector in vectors]
    # The library is the session's (conftest.py): put the exact scan back afterwards.
    from_rows, min_candidates = matrix.sign_from_rows, matrix.sign_min_candidates
    matrix.set_sign_from_rows(0)
    matrix.sign_min_candidates = 0
    try:
        assert matrix.scans_signs and 2 * matrix.sign_candidates * 10 <= len(matrix)
        same_three = same_ten = 0
        for vector, want in zip(vectors, exact, strict=True):
            got = matrix.top(vector, 0.0, 10)
            _assert_same_ranking(got[:1], want[:1])
            same_three += [seq for seq, _ in got[:3]] == [seq for seq, _ in want[:3]]
            same_ten += [seq for seq, _ in got] == [seq for seq, _ in want]
    finally:
        matrix.set_sign_from_rows(from_rows)
        matrix.sign_min_candidates = min_candidates
    assert same_three >= 0.95 * len(queries), same_three
    assert same_ten >= 0.85 * len(queries), same_ten
