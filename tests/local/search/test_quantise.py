"""quantise.py's graph surgery, on a two-layer toy model: which layers are split, and that
the split leaves the float model's function unchanged (only quantising changes numbers)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from screvi_mcp.local.search.onnx_runtime import ort  # noqa: E402
from screvi_mcp.local.search.quantise import (  # noqa: E402
    down_projections,
    linear_matmuls,
    split_outlier_channels,
)


def _toy_model() -> onnx.ModelProto:
    """x (4 wide) -> up (4 -> 8) -> down (8 -> 4): the shape of a feed-forward block."""
    rng = np.random.default_rng(3)
    up = numpy_helper.from_array(rng.normal(size=(4, 8)).astype(np.float32), "w_up")
    down = numpy_helper.from_array(rng.normal(size=(8, 4)).astype(np.float32), "w_down")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w_up"], ["h"], "up"),
            helper.make_node("MatMul", ["h", "w_down"], ["y"], "down"),
        ],
        "toy",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])],
        [up, down],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"x": x})[0])


def test_only_layers_reading_a_wider_input_than_they_write_are_down_projections() -> None:
    model = _toy_model()
    assert [node.name for node in linear_matmuls(model)] == ["up", "down"]
    assert [node.name for node in down_projections(model)] == ["down"]


def test_splitting_outlier_channels_keeps_the_float_function() -> None:
    model = _toy_model()
    x = np.random.default_rng(4).normal(size=(5, 4)).astype(np.float32)
    before = _run(model, x)
    peaks = np.arange(8, dtype=np.float32)  # channels 6 and 7 are the "outliers"
    kept_float = split_outlier_channels(model, {"down": peaks}, count=2)
    assert kept_float == ["down.outlier_channels.matmul"]
    index = {init.name: init for init in model.graph.initializer}["down.outlier_channels.index"]
    assert numpy_helper.to_array(index).tolist() == [6, 7]
    assert [n.name for n in model.graph.node].count("up") == 1  # the up-projection untouched
    np.testing.assert_allclose(_run(model, x), before, rtol=1e-5, atol=1e-5)
