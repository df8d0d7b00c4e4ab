"""The all-mpnet-base-v2 encoder as an ONNX graph, built from its weights with `onnx.helper`.

No PyTorch: the weights come from `model.safetensors` as numpy arrays (`weights.py`), and
the graph below re-states Hugging Face's `MPNetModel` forward pass (transformers,
`models/mpnet/modeling_mpnet.py`):

- embeddings: word embedding + position embedding, positions counted from
  `padding_idx + 1` = 2 (the embedder pads on the right, so a real token's position is its
  index + 2), then LayerNorm; MPNet has no token-type embedding;
- one relative position bias for every layer: each (query, key) offset `key - query` falls in
  one of 32 buckets (exact below 8 either way, logarithmic up to 128), and each bucket has a
  learned bias per head. The offsets a text can have are known in advance, so the bias of
  every offset from -(MAX_POSITIONS-1) to MAX_POSITIONS-1 is computed here in numpy once, and
  the graph only gathers the rows its sequence length needs;
- 12 post-LayerNorm layers: self-attention (scores / sqrt(64) + position bias + padding
  mask, softmax), output projection, residual + LayerNorm; feed-forward 768 -> 3072 (exact
  erf GELU) -> 768, residual + LayerNorm.

The graph's output is the last hidden state, one vector per token, like the MiniLM model's:
the embedder mean-pools it over the attention mask and L2-normalises (sentence-transformers'
recipe for this model: modules.json lists mean pooling then Normalize), and the verify judge
reads the token vectors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
# The embedder feeds at most 256 tokens a window (embedder.MAX_TOKENS); the model has 514
# position rows, 2 of them before the first token.
MAX_POSITIONS = 512
# In the feed-forward MatMuls' names. Their inputs carry the strongest outlier channels
# (quantise.py keeps those channels in float).
FEED_FORWARD_MARK = "feed_forward"


def relative_position_bucket(
    relative_position: npt.NDArray[np.int64], num_buckets: int = 32, max_distance: int = 128
) -> npt.NDArray[np.int64]:
    """transformers' `MPNetEncoder.relative_position_bucket`, in numpy."""
    n = -relative_position
    num_buckets //= 2
    result = (n < 0).astype(np.int64) * num_buckets
    n = np.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        large = max_exact + (
            np.log(np.maximum(n, 1).astype(np.float32) / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return result + np.where(is_small, n, large)


def offset_bias_table(bucket_bias: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """[2*MAX_POSITIONS - 1, heads]: the bias of offset `key - query`, at row offset + 511."""
    offsets = np.arange(-(MAX_POSITIONS - 1), MAX_POSITIONS, dtype=np.int64)
    table: npt.NDArray[np.float32] = bucket_bias[relative_position_bucket(offsets)].astype(
        np.float32
    )
    return table


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def constant(self, name: str, value: npt.NDArray[np.generic]) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], name: str = "", **attributes: Any) -> str:
        self._count += 1
        node_name = name or f"{op_type.lower()}_{self._count}"
        output = f"{node_name}_out"
        self.nodes.append(helper.make_node(op_type, inputs, [output], node_name, **attributes))
        return output

    def linear(
        self, x: str, weight: npt.NDArray[np.float32], bias: npt.NDArray[np.float32], name: str
    ) -> str:
        # torch's Linear keeps weight as [out, in]; MatMul wants [in, out].
        w = self.constant(f"{name}.weight", weight.T.astype(np.float32))
        b = self.constant(f"{name}.bias", bias.astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, w], name=f"{name}.matmul"), b])

    def layer_norm(
        self, x: str, weights: Mapping[str, npt.NDArray[np.float32]], prefix: str, epsilon: float
    ) -> str:
        scale = self.constant(f"{prefix}.weight", weights[f"{prefix}.weight"])
        bias = self.constant(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=epsilon)


def build_mpnet_graph(
    weights: Mapping[str, npt.NDArray[np.float32]], config: Mapping[str, object]
) -> onnx.ModelProto:
    """The encoder for `weights` (tensor name -> array, as in model.safetensors) and
    `config` (config.json), with inputs input_ids and attention_mask [batch, sequence]."""
    hidden = int(str(config["hidden_size"]))
    heads = int(str(config["num_attention_heads"]))
    epsilon = float(str(config.get("layer_norm_eps", 1e-5)))
    g = _Builder()
    x, positions = _embeddings(g, weights, int(str(config.get("pad_token_id", 1))), epsilon)
    shapes = _Shapes(
        split_heads=g.constant("split_heads", np.array([0, 0, heads, hidden // heads], np.int64)),
        merge_heads=g.constant("merge_heads", np.array([0, 0, hidden], np.int64)),
        scale=g.constant("scale", np.array(1.0 / math.sqrt(hidden // heads), np.float32)),
        half=g.constant("half", np.array(0.5, np.float32)),
        sqrt2=g.constant("sqrt2", np.array(math.sqrt(2.0), np.float32)),
        one="one_f",
        attention_bias=_attention_bias(g, weights, positions),
        epsilon=epsilon,
    )
    for i in range(int(str(config["num_hidden_layers"]))):
        x = _layer(g, x, weights, f"encoder.layer.{i}", shapes)
    return _model(g, x, hidden)


def _embeddings(
    g: _Builder, weights: Mapping[str, npt.NDArray[np.float32]], padding_idx: int, epsilon: float
) -> tuple[str, str]:
    """Word + position embeddings, LayerNorm'd, and the positions 0..seq-1."""
    shape = g.op("Shape", ["input_ids"])
    seq_len = g.op("Gather", [shape, g.constant("one_index", np.array(1, np.int64))], axis=0)
    zero = g.constant("zero", np.array(0, np.int64))
    step = g.constant("one", np.array(1, np.int64))
    positions = g.op("Range", [zero, seq_len, step])  # [seq]
    word = g.constant(
        "embeddings.word_embeddings.weight", weights["embeddings.word_embeddings.weight"]
    )
    position_table = g.constant(
        "embeddings.position_embeddings.weight",
        weights["embeddings.position_embeddings.weight"][padding_idx + 1 :],
    )
    x = g.op(
        "Add",
        [
            g.op("Gather", [word, "input_ids"], axis=0),
            g.op("Gather", [position_table, positions], axis=0),
        ],
    )
    return g.layer_norm(x, weights, "embeddings.LayerNorm", epsilon), positions


def _attention_bias(
    g: _Builder, weights: Mapping[str, npt.NDArray[np.float32]], positions: str
) -> str:
    """The relative position bias plus the padding mask, [batch, heads, seq, seq], which
    every layer adds to its attention scores."""
    # The padding mask, [batch, 1, 1, seq]: 0 where attended, a large negative where padded.
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Unsqueeze", [mask, g.constant("mask_axes", np.array([1, 2], np.int64))])
    mask = g.op(
        "Mul",
        [
            g.op("Sub", [g.constant("one_f", np.array(1.0, np.float32)), mask]),
            g.constant("masked", np.array(-1e9, np.float32)),
        ],
    )
    # The relative position bias, [1, heads, seq, seq], shared by all layers.
    table = g.constant(
        "relative_offset_bias", offset_bias_table(weights["encoder.relative_attention_bias.weight"])
    )
    query_pos = g.op("Unsqueeze", [positions, g.constant("axis1", np.array([1], np.int64))])
    key_pos = g.op("Unsqueeze", [positions, g.constant("axis0", np.array([0], np.int64))])
    offset = g.op(
        "Add",
        [
            g.op("Sub", [key_pos, query_pos]),
            g.constant("offset_shift", np.array(MAX_POSITIONS - 1, np.int64)),
        ],
    )
    bias = g.op("Gather", [table, offset], axis=0)  # [seq, seq, heads]
    bias = g.op(
        "Unsqueeze",
        [g.op("Transpose", [bias], perm=[2, 0, 1]), g.constant("axis0b", np.array([0], np.int64))],
    )
    return g.op("Add", [bias, mask])


def _model(g: _Builder, x: str, hidden: int) -> onnx.ModelProto:
    """The graph with `x` as its output, last_hidden_state [batch, sequence, hidden]."""
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], "output"))
    dynamic = ["batch", "sequence"]
    graph = helper.make_graph(
        g.nodes,
        "all-mpnet-base-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, dynamic),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dynamic),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dynamic, hidden])],
        g.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="screvi-mcp"
    )
    model.ir_version = 8  # readable by every onnxruntime the `local` extra allows
    return model


@dataclass(frozen=True)
class _Shapes:
    """Constants every layer shares."""

    split_heads: str
    merge_heads: str
    scale: str
    half: str
    sqrt2: str
    one: str
    attention_bias: str
    epsilon: float


def _layer(
    g: _Builder, x: str, weights: Mapping[str, npt.NDArray[np.float32]], p: str, c: _Shapes
) -> str:
    """One post-LayerNorm transformer layer (MPNetLayer)."""

    def w(name: str) -> npt.NDArray[np.float32]:
        return weights[f"{p}.{name}"]

    def heads_of(t: str) -> str:
        return g.op("Transpose", [g.op("Reshape", [t, c.split_heads])], perm=[0, 2, 1, 3])

    q, k, v = (
        heads_of(
            g.linear(
                x,
                w(f"attention.attn.{n}.weight"),
                w(f"attention.attn.{n}.bias"),
                f"{p}.attention.{n}",
            )
        )
        for n in "qkv"
    )
    scores = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), c.scale])
    probabilities = g.op("Softmax", [g.op("Add", [scores, c.attention_bias])], axis=-1)
    context = g.op("Transpose", [g.op("MatMul", [probabilities, v])], perm=[0, 2, 1, 3])
    context = g.op("Reshape", [context, c.merge_heads])
    attended = g.linear(
        context, w("attention.attn.o.weight"), w("attention.attn.o.bias"), f"{p}.attention.o"
    )
    x = g.layer_norm(g.op("Add", [attended, x]), weights, f"{p}.attention.LayerNorm", c.epsilon)
    up = g.linear(
        x,
        w("intermediate.dense.weight"),
        w("intermediate.dense.bias"),
        f"{p}.{FEED_FORWARD_MARK}.up",
    )
    # Exact (erf) GELU, the model's "gelu".
    gelu = g.op(
        "Mul",
        [
            g.op("Mul", [up, c.half]),
            g.op("Add", [g.op("Erf", [g.op("Div", [up, c.sqrt2])]), c.one]),
        ],
    )
    down = g.linear(
        gelu, w("output.dense.weight"), w("output.dense.bias"), f"{p}.{FEED_FORWARD_MARK}.down"
    )
    return g.layer_norm(g.op("Add", [down, x]), weights, f"{p}.output.LayerNorm", c.epsilon)
