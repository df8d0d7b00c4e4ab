"""The int8 candidate scan: the ranking it returns is the float32 ranking."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from synthetic_vectors import near_queries, unit_rows

from screvi_mcp.local.search import int8_scan
from screvi_mcp.local.search.vectors import VectorMatrix

DIMENSIONS = 384


def _pair(rows: np.ndarray, seqs: list[int]) -> tuple[VectorMatrix, VectorMatrix]:
    """The same rows twice: one scanned through int8 (from 1,000 rows), one float32 only."""
    int8 = VectorMatrix(DIMENSIONS)
    int8.set_int8_from_rows(1000)
    float32 = VectorMatrix(DIMENSIONS)
    float32.set_int8_from_rows(10**12)
    for matrix in (int8, float32):
        matrix.replace_all(seqs, rows)
    assert int8.scans_int8 and not float32.scans_int8
    return int8, float32


def _assert_same_ranking(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    assert [seq for seq, _ in got] == [seq for seq, _ in want]
    np.testing.assert_allclose([c for _, c in got], [c for _, c in want], atol=1e-6)


@pytest.mark.parametrize(("limit", "min_cosine"), [(10, 0.0), (100, 0.0), (1000, 0.25)])
def test_rescored_ranking_equals_the_float32_ranking(limit: int, min_cosine: float) -> None:
    rng = np.random.default_rng(17)
    rows = unit_rows(rng, 30_000)
    seqs = list(range(5, 5 + rows.shape[0]))
    int8, float32 = _pair(rows, seqs)
    for query in near_queries(rng, rows, 12, noise=0.06):
        want = float32.top(query, min_cosine, limit)
        assert len(want) == limit  # the limit binds, so the pool's cut matters
        _assert_same_ranking(int8.top(query, min_cosine, limit), want)


def test_the_floor_is_applied_to_float32_cosines() -> None:
    """Rows just above and below the floor: int8 rounding must neither admit nor drop."""
    rng = np.random.default_rng(3)
    rows = unit_rows(rng, 20_000)
    seqs = list(range(rows.shape[0]))
    int8, float32 = _pair(rows, seqs)
    query = near_queries(rng, rows, 1, noise=0.06)[0]
    cosines = np.sort(rows @ query)[::-1]
    floor = float(cosines[150] + cosines[151]) / 2  # 151 rows pass, the next is close
    want = float32.top(query, floor, 1000)
    assert len(want) == 151
    _assert_same_ranking(int8.top(query, floor, 1000), want)


def test_writes_keep_the_int8_copy_in_step() -> None:
    """Upserts, edits and removals (which move the last row into the hole) change the int8
    copy with the float32 rows: rankings still agree, and a removed row never appears."""
    rng = np.random.default_rng(5)
    rows = unit_rows(rng, 12_000)
    int8, float32 = _pair(rows[:10_000], list(range(10_000)))
    removed = [int(seq) for seq in rng.choice(10_000, 500, replace=False)]
    extra = list(range(10_000, 12_000))
    edited = [int(seq) for seq in rng.choice(10_000, 300, replace=False) if seq not in removed]
    new_vectors = unit_rows(rng, len(edited))
    for matrix in (int8, float32):
        matrix.remove(removed)
        matrix.upsert(extra, rows[10_000:])
        matrix.upsert(edited, new_vectors)
    for query in [*near_queries(rng, rows, 6, noise=0.06), *new_vectors[:4]]:
        want = float32.top(query, 0.0, 200)
        got = int8.top(query, 0.0, 200)
        _assert_same_ranking(got, want)
        assert not {seq for seq, _ in got} & set(removed)


def test_int8_scores_stay_within_their_bound() -> None:
    rng = np.random.default_rng(9)
    rows = unit_rows(rng, 9000)  # more than one block of codes
    codes = int8_scan.Int8Codes(DIMENSIONS)
    codes.set_rows(0, rows)
    for query in near_queries(rng, rows, 5, noise=0.06):
        approx, query_step = codes.scores(query, rows.shape[0])
        error = np.abs(approx - rows @ query)
        bound = int8_scan.score_error_bound(query_step, codes.largest_step(9000), DIMENSIONS)
        assert error.max() <= bound
        # The 7-bit query keeps the kernel's int16 pair sums from saturating: errors stay
        # at rounding size (saturation showed as 0.02).
        assert error.max() < 0.005


def test_the_hand_written_graph_is_a_valid_onnx_model() -> None:
    model = onnx.load_from_string(int8_scan.model_bytes())
    onnx.checker.check_model(model, full_check=True)
    (node,) = model.graph.node
    assert node.op_type == "MatMulInteger"
    types = {
        value.name: value.type.tensor_type.elem_type
        for value in [*model.graph.input, *model.graph.output]
    }
    assert types == {
        "q": onnx.TensorProto.UINT8,
        "m": onnx.TensorProto.INT8,
        "zq": onnx.TensorProto.UINT8,
        "y": onnx.TensorProto.INT32,
    }
