"""A compact int8 copy of the vector matrix, scanned first to pick candidates.

A full float32 scan at 100k x 384 reads 154 MB per query and is bound by memory bandwidth,
which is what other processes on a loaded machine fight over. The int8 copy is a quarter of
that. numpy has no fast int8 product, so the scan runs onnxruntime's `MatMulInteger`
(its MLAS u8 x s8 kernel) over the codes stored transposed, dimension by row.

Two details keep its scores close (about 0.0005 RMS, 0.003 at worst on MiniLM-like
vectors, against cosines whose useful range is 0.25 to 0.7) and the scan fast:

- Each row has its own scale (its largest component maps to 127), so short and long
  components of different rows do not share one coarse step.
- The kernel adds pairs of u8 x s8 products in saturating int16, so the query (one row:
  MLAS has a fast path for a single row, two rows measured 5-10x slower) goes in with
  7-bit magnitudes, -63..63 offset by a zero point of 64 into 1..127: pair sums stay below
  2 x 127 x 127 = 32,258. A query offset into 0..255 overflowed it (errors of 0.02).

The scores only choose candidates; `vectors.VectorMatrix.top` re-scores those in float32,
so what search returns is float32 cosines.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

Codes = npt.NDArray[np.int8]
Floats = npt.NDArray[np.float32]

# Rows per block of codes. Blocks never move when the matrix grows; a scan runs once per
# block (about 20 microseconds of call overhead each) and reads the last one whole.
BLOCK_ROWS = 8192
_LEVELS = 127
_QUERY_LEVELS = 63
_QUERY_ZERO = 64

# The most an int8 score can differ from the float32 cosine of unit vectors, from the
# rounding bound |q.m - q'.m'| <= |q|.|m - m'| + |q - q'|.|m'| with each component off by
# at most half a step: sqrt(d) x (step_m + step_q) / 2, steps 1/127 (rows) and 1/63 (query) of a
# vector's largest component. `score_error_bound` gives the bound of one query.


def score_error_bound(query_step: float, largest_row_step: float, dimensions: int) -> float:
    """An upper bound of |int8 score - float32 cosine| for unit-length rows and query."""
    return float(np.sqrt(dimensions) * (query_step + largest_row_step) / 2 * 1.01)


class Int8Codes:
    """int8 codes of rows 0..n of a matrix, one scale per row, in column blocks."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self._blocks: list[Codes] = []
        self._steps: Floats = np.zeros(0, dtype=np.float32)

    @property
    def capacity(self) -> int:
        return len(self._blocks) * BLOCK_ROWS

    def reserve(self, rows: int) -> None:
        while self.capacity < rows:
            self._blocks.append(np.zeros((self.dimensions, BLOCK_ROWS), dtype=np.int8))
        if self._steps.shape[0] < self.capacity:
            steps = np.zeros(self.capacity, dtype=np.float32)
            steps[: self._steps.shape[0]] = self._steps
            self._steps = steps

    def set_rows(self, first: int, vectors: Floats) -> None:
        """Codes for rows first..first+len(vectors).

        A block's worth of rows at a time: quantizing the whole matrix at once would hold
        several float32 temporaries of its size (measured: +300 MiB peak at 100k)."""
        self.reserve(first + vectors.shape[0])
        done = 0
        while done < vectors.shape[0]:
            row = first + done
            block, column = divmod(row, BLOCK_ROWS)
            take = min(BLOCK_ROWS - column, vectors.shape[0] - done)
            codes, steps = quantize(vectors[done : done + take])
            self._steps[row : row + take] = steps
            self._blocks[block][:, column : column + take] = codes.T
            done += take

    def set_row(self, row: int, vector: Floats) -> None:
        self.set_rows(row, vector.reshape(1, -1))

    def copy_row(self, source: int, target: int) -> None:
        s_block, s_column = divmod(source, BLOCK_ROWS)
        t_block, t_column = divmod(target, BLOCK_ROWS)
        self._blocks[t_block][:, t_column] = self._blocks[s_block][:, s_column]
        self._steps[target] = self._steps[source]

    def largest_step(self, size: int) -> float:
        return float(self._steps[:size].max()) if size else 0.0

    def scores(self, query: Floats, size: int) -> tuple[Floats, float]:
        """Approximate cosines of rows 0..size with `query`, and the query's step."""
        query_codes, query_step = _query_row(query)
        session = _session()
        parts = []
        zero = np.array(_QUERY_ZERO, dtype=np.uint8)
        for block in self._blocks[: -(-size // BLOCK_ROWS)]:
            out: Any = session.run(None, {"q": query_codes, "m": block, "zq": zero})[0]
            parts.append(out[0])
        products = np.concatenate(parts)[:size] if parts else np.zeros(0, dtype=np.int32)
        scores: Floats = products.astype(np.float32)
        scores *= self._steps[:size]
        scores *= np.float32(query_step)
        return scores, query_step


def quantize(vectors: Floats) -> tuple[npt.NDArray[np.int8], Floats]:
    """Per-row int8 codes (-127..127) and the step each row's codes count in."""
    largest = np.abs(vectors).max(axis=1) if vectors.size else np.zeros(vectors.shape[0])
    steps = (largest / _LEVELS).astype(np.float32)
    safe = np.where(steps > 0, steps, 1.0).astype(np.float32)
    codes = np.clip(np.rint(vectors / safe[:, None]), -_LEVELS, _LEVELS).astype(np.int8)
    return codes, steps


def _query_row(query: Floats) -> tuple[npt.NDArray[np.uint8], float]:
    largest = float(np.abs(query).max()) if query.size else 0.0
    step = largest / _QUERY_LEVELS if largest > 0 else 1.0
    codes = np.clip(np.rint(query / step), -_QUERY_LEVELS, _QUERY_LEVELS) + _QUERY_ZERO
    return codes.astype(np.uint8).reshape(1, -1), step


# -- the onnxruntime graph ---------------------------------------------------------------
# One MatMulInteger node, written out as protobuf bytes here because the `onnx` package is
# not a runtime dependency (tests check these bytes against onnx's own builder).

_UINT8, _INT8, _INT32 = 2, 3, 6
_session_lock = threading.Lock()
_sessions: dict[int, Any] = {}


def _session() -> Any:
    key = os.getpid()  # a forked child must not share the parent's runtime threads
    session = _sessions.get(key)
    if session is None:
        with _session_lock:
            session = _sessions.get(key)
            if session is None:
                from screvi_mcp.local.search.onnx_runtime import ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = os.cpu_count() or 1
                options.log_severity_level = 3
                # Spinning runtime threads would starve the float32 re-score that follows.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                session = ort.InferenceSession(
                    model_bytes(), options, providers=["CPUExecutionProvider"]
                )
                _sessions[key] = session
    return session


def model_bytes() -> bytes:
    """ONNX model: y[1, n] int32 = MatMulInteger(q[1, d] uint8, m[d, n] int8, zero point zq)."""
    node = (
        _field(1, b"q")
        + _field(1, b"m")
        + _field(1, b"zq")
        + _field(2, b"y")
        + _field(4, b"MatMulInteger")
    )
    graph = (
        _field(1, node)
        + _field(2, b"int8_scan")
        + _field(11, _value_info(b"q", _UINT8, [1, "d"]))
        + _field(11, _value_info(b"m", _INT8, ["d", "n"]))
        + _field(11, _value_info(b"zq", _UINT8, []))
        + _field(12, _value_info(b"y", _INT32, [1, "n"]))
    )
    opset = _field(1, b"") + _varint_field(2, 13)
    return _varint_field(1, 8) + _field(7, graph) + _field(8, opset)


def _value_info(name: bytes, elem_type: int, dims: list[int | str]) -> bytes:
    shape = b"".join(
        _field(1, _varint_field(1, dim) if isinstance(dim, int) else _field(2, dim.encode()))
        for dim in dims
    )
    tensor = _varint_field(1, elem_type) + _field(2, shape)
    return _field(1, name) + _field(2, _field(1, tensor))


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload
