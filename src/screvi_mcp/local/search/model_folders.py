"""Converted model folders in the model cache: named by what they were built from, built once.

Every converted model (mpnet's int8 build, MiniLM's int8 fast model, the verify judge's cut
of MiniLM, multilingual-e5 on onnxruntime) is a folder that several processes may want at
the same moment. Kept apart from the embedders so that the converters and the loaders can
both use it without importing each other.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def build_once(
    target: Path, build: Callable[[Path], None], files: Sequence[str] = ("model.onnx",)
) -> Path:
    """`target`, a model folder holding `files`, built by `build(work)` first if missing.

    Built in a scratch folder beside it and renamed into place, so no process ever loads half
    a model; when two processes build at once, the first rename wins and the other's work is
    dropped.
    """
    if all((target / name).is_file() for name in files):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        build(work)
        try:
            os.replace(work, target)
        except OSError:  # another process finished first: use its
            if not all((target / name).is_file() for name in files):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
