"""mpnet/graph.py on random weights of a small MPNet (no wheels needed): converter 3's one
MatMul for queries, keys and values computes what versions 1-2's three MatMuls did, which is
why a library embedded by version 2 keeps its vectors (convert.VECTORS_VERSION)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from screvi_mcp.local.search.mpnet import convert  # noqa: E402
from screvi_mcp.local.search.mpnet.graph import MAX_POSITIONS, build_mpnet_graph  # noqa: E402
from screvi_mcp.local.search.onnx_runtime import ort  # noqa: E402

HIDDEN, HEADS, LAYERS, VOCAB = 16, 2, 2, 40
CONFIG = {"hidden_size": HIDDEN, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS}


def _weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)

    def normal(*shape: int) -> np.ndarray:
        return rng.normal(scale=0.5, size=shape).astype(np.float32)

    weights = {
        "embeddings.word_embeddings.weight": normal(VOCAB, HIDDEN),
        "embeddings.position_embeddings.weight": normal(MAX_POSITIONS + 2, HIDDEN),
        "embeddings.LayerNorm.weight": 1 + normal(HIDDEN),
        "embeddings.LayerNorm.bias": normal(HIDDEN),
        "encoder.relative_attention_bias.weight": normal(32, HEADS),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        for name, (out, width) in {
            **{f"attention.attn.{n}": (HIDDEN, HIDDEN) for n in "qkvo"},
            "intermediate.dense": (4 * HIDDEN, HIDDEN),
            "output.dense": (HIDDEN, 4 * HIDDEN),
        }.items():
            weights[f"{p}.{name}.weight"] = normal(out, width)
            weights[f"{p}.{name}.bias"] = normal(out)
        for norm in ("attention.LayerNorm", "output.LayerNorm"):
            weights[f"{p}.{norm}.weight"] = 1 + normal(HIDDEN)
            weights[f"{p}.{norm}.bias"] = normal(HIDDEN)
    return weights


def _run(model: onnx.ModelProto, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"input_ids": ids, "attention_mask": mask})[0])


def test_one_matmul_for_queries_keys_and_values_computes_what_three_did() -> None:
    weights = _weights()
    fused = build_mpnet_graph(weights, CONFIG)
    separate = build_mpnet_graph(weights, CONFIG, fused_qkv=False)
    matmuls = [n for n in fused.graph.node if n.op_type == "MatMul" and "attention." in n.name]
    assert {n.name.split(".")[-2] for n in matmuls} == {"qkv", "o"}  # no q, k, v of their own
    assert len(matmuls) == 2 * LAYERS
    ids = np.random.default_rng(8).integers(2, VOCAB, size=(3, 9))
    mask = np.ones_like(ids)
    mask[1, 6:] = 0  # a padded row: the mask and the position bias go through either graph
    np.testing.assert_allclose(
        _run(fused, ids, mask), _run(separate, ids, mask), rtol=1e-5, atol=1e-5
    )


def test_a_new_converter_keeps_the_model_id_while_its_vectors_stay_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The folder is rebuilt for a new converter version; the id a library recorded only
    moves with VECTORS_VERSION (which would tell every library to reindex)."""
    monkeypatch.setattr(convert, "wheels_digest", lambda version: f"digest{version}")
    monkeypatch.setattr(convert, "CONVERTER_VERSION", 3)
    monkeypatch.setattr(convert, "VECTORS_VERSION", 2)
    assert convert.model_folder_name() == "all-mpnet-base-v2-int8-v3-digest3"
    # Exactly the name version 2's folder had, which libraries embedded by it recorded.
    assert convert.model_id() == "all-mpnet-base-v2-int8-v2-digest2"
    monkeypatch.setattr(convert, "VECTORS_VERSION", 3)
    assert convert.model_id() == "all-mpnet-base-v2-int8-v3-digest3"
