"""int8 dynamic quantisation of a sentence model that keeps its rankings (issue 30).

onnxruntime's dynamic quantisation picks one scale per activation tensor at run time, from
its largest value. Transformer activations have a few outlier channels: in
all-mpnet-base-v2 a handful of the 3072 feed-forward channels reach 50-100 where the median
channel peaks near 2, so one scale for all left every other channel with a few levels, and
the sentence vectors only 0.88 cosine-similar to the float model's. Here each linear MatMul
is split in two before quantising: the `OUTLIERS` input channels with the largest values
seen on `CALIBRATION` sentences go through a small float MatMul, the rest (those channels
zeroed) through the int8 one, and the two are added. Weights are quantised per output
channel. Measured on all-mpnet-base-v2 (docs/models.md): 2.5x less CPU per text than the
previous build (feed-forward in float), vectors 0.997 cosine-similar to the float model's
(0.9925 at worst on the labelled set), tuning-half ranking equal to the float model's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnx
from onnx import helper, numpy_helper
from tokenizers import Tokenizer

# Input channels per MatMul kept in float: the tuning half chose 8 (16 and 32 agreed no
# better with the float model: the remaining error is elsewhere).
OUTLIERS = 8
OUTLIER_MARK = "outlier_channels"
# Sentences to find the outlier channels on: which channels they are depends on the model,
# hardly on the text (the same few lead on any English prose), so a short varied list does.
CALIBRATION = (
    "Water tomatoes at the base in the morning; wet leaves overnight invite blight.",
    "The committee approved the budget on 12 March 2024, after three hours of debate.",
    "What we notice shapes what we remember, and what we remember shapes who we become.",
    "def parse(line: str) -> dict[str, int]: return {k: int(v) for k, v in pairs(line)}",
    "Worse is better.",
    "Compound interest is the eighth wonder of the world; he who understands it, earns it.",
    "In 1854 John Snow traced a cholera outbreak to a single water pump on Broad Street.",
    'She said, "Never again!" -- and then, of course, did it twice more that summer.',
    "The enzyme's activity doubled between 25 and 37 degrees Celsius, then fell sharply.",
    "Sunlight is the best disinfectant.",
    "Markets can remain irrational longer than you can remain solvent.",
    "A good question is worth more than a hundred quick answers, because it tells you "
    "where to look next and what you would have to believe for the answer to be wrong.",
)


def linear_matmuls(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    """MatMuls by a constant 2-D weight: the layers quantisation makes int8."""
    weights = {init.name: init for init in model.graph.initializer}
    return [
        node
        for node in model.graph.node
        if node.op_type == "MatMul"
        and node.input[1] in weights
        and len(weights[node.input[1]].dims) == 2
    ]


def down_projections(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    """The linear MatMuls that read a wider input than they write: the feed-forward
    down-projections, whose input (the GELU's output) holds the outlier channels."""
    weights = {init.name: init for init in model.graph.initializer}
    return [
        node
        for node in linear_matmuls(model)
        if weights[node.input[1]].dims[0] > weights[node.input[1]].dims[1]
    ]


def channel_maxima(
    model: onnx.ModelProto,
    tokenizer_path: Path,
    texts: Iterable[str] = CALIBRATION,
    nodes: list[onnx.NodeProto] | None = None,
) -> dict[str, npt.NDArray[np.float32]]:
    """Each linear MatMul's (or each of `nodes`') largest absolute input per channel."""
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_length=256)
    feeds = (
        {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        for encoding in map(tokenizer.encode, texts)
    )
    return maxima_over(model, feeds, nodes)


def maxima_over(
    model: onnx.ModelProto,
    feeds: Iterable[dict[str, npt.NDArray[np.int64]]],
    nodes: list[onnx.NodeProto] | None = None,
) -> dict[str, npt.NDArray[np.float32]]:
    """`channel_maxima` over model inputs already made (a model with its own tokeniser)."""
    from screvi_mcp.local.search.onnx_runtime import ort

    nodes = linear_matmuls(model) if nodes is None else nodes
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    wanted = sorted({node.input[0] for node in nodes})
    for name in wanted:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    del probe
    inputs = {node.name for node in session.get_inputs()}
    peaks: dict[str, npt.NDArray[np.float32]] = {}
    for feed in feeds:
        outputs = session.run(wanted, {k: v for k, v in feed.items() if k in inputs})
        for name, output in zip(wanted, outputs, strict=True):
            peak = np.abs(np.asarray(output)).reshape(-1, output.shape[-1]).max(axis=0)
            peaks[name] = np.maximum(peaks[name], peak) if name in peaks else peak
    return {node.name: peaks[node.input[0]] for node in nodes}


def split_outlier_channels(
    model: onnx.ModelProto, maxima: dict[str, npt.NDArray[np.float32]], count: int = OUTLIERS
) -> list[str]:
    """Rewrite each MatMul in `maxima` as int8-able main part + float outlier part, in place;
    returns the names of the float parts (for quantisation to leave alone)."""
    weights = {init.name: init for init in model.graph.initializer}
    rewritten: list[onnx.NodeProto] = []
    kept_float: list[str] = []
    for node in model.graph.node:
        peaks = maxima.get(node.name)
        if peaks is None:
            rewritten.append(node)
            continue
        channels = np.sort(np.argsort(-peaks)[:count]).astype(np.int64)
        weight = numpy_helper.to_array(weights[node.input[1]])
        keep = np.ones(weight.shape[0], dtype=np.float32)
        keep[channels] = 0.0
        name, x = node.name, node.input[0]
        side = f"{name}.{OUTLIER_MARK}"
        model.graph.initializer.extend(
            [
                numpy_helper.from_array(keep, f"{side}.keep"),
                numpy_helper.from_array(channels, f"{side}.index"),
                numpy_helper.from_array(np.ascontiguousarray(weight[channels]), f"{side}.weight"),
            ]
        )
        rewritten += [
            helper.make_node("Mul", [x, f"{side}.keep"], [f"{name}.rest"], f"{side}.zero"),
            helper.make_node("MatMul", [f"{name}.rest", node.input[1]], [f"{name}.main"], name),
            helper.make_node("Gather", [x, f"{side}.index"], [f"{side}.x"], side + ".g", axis=-1),
            helper.make_node(
                "MatMul", [f"{side}.x", f"{side}.weight"], [f"{side}.y"], f"{side}.matmul"
            ),
            helper.make_node("Add", [f"{name}.main", f"{side}.y"], list(node.output), side),
        ]
        kept_float.append(f"{side}.matmul")
    del model.graph.node[:]
    model.graph.node.extend(rewritten)
    return kept_float


def quantise(
    model: onnx.ModelProto,
    tokenizer_path: Path,
    work: Path,
    target: Path,
    *,
    split_down_only: bool = False,
) -> None:
    """Write `model` to `target` as int8 with its outlier channels in float. `work` is a
    folder for the intermediate float file (removed after).

    `split_down_only` splits only the feed-forward down-projections (every linear layer is
    still int8): at 384 dimensions (MiniLM) the split's element-wise work on every layer ate
    most of the int8 gain, and the down-projections alone held quality (docs/models.md)."""
    nodes = down_projections(model) if split_down_only else None
    quantise_split(model, channel_maxima(model, tokenizer_path, nodes=nodes), work, target)


def quantise_split(
    model: onnx.ModelProto,
    maxima: dict[str, npt.NDArray[np.float32]],
    work: Path,
    target: Path,
    op_types: list[str] | None = None,
) -> None:
    """`quantise` with the channel maxima given: the MatMuls in `maxima` are split.
    `op_types`: the operators to quantise (None: onnxruntime's default list, which also
    makes a gathered embedding table uint8)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    kept_float = split_outlier_channels(model, maxima)
    float_path = work / "model-split-fp32.onnx"
    onnx.save(model, str(float_path))
    # The quantiser logs a line per layer on the root logger: noise on a server's stderr.
    with _root_logger_at(logging.WARNING + 10):
        quantize_dynamic(
            float_path,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            nodes_to_exclude=kept_float,
            op_types_to_quantize=op_types,
            # A contrib operator's output (e5's attention) has no inferred type: float.
            extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    float_path.unlink()


@contextmanager
def _root_logger_at(level: int) -> Iterator[None]:
    root = logging.getLogger()
    before = root.level
    root.setLevel(max(level, before))
    try:
        yield
    finally:
        root.setLevel(before)
