"""`screvi-mcp check` says whether the set-up works, one line per part with its fix, and
exits non-zero when something is wrong. It changes nothing and contacts the hosted API only
when asked (--online), with one request against a real second library here."""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path

import pytest

from screvi_mcp.cli import main
from screvi_mcp.local.api import keys
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.storage.library import Library
from testsupport.servers import asgi_server, free_port

pytest.importorskip("onnxruntime", reason="a working embedded set-up needs the `local` extra")


def check(
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str] | None = None,
) -> tuple[int, dict[str, str]]:
    """Exit status and {part: line} of `screvi-mcp check ARGV`."""
    for key in [key for key in os.environ if key.startswith("SCREVI_")]:
        monkeypatch.delenv(key)
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    # The default mirror's location, which must hold none here whatever this machine has.
    monkeypatch.setenv("XDG_DATA_HOME", "/nonexistent/screvi-check")
    code = main(["check", "--port", "0", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    lines = {line.split(":", 1)[0].split()[-1]: line for line in out.splitlines()}
    return code, lines


def test_a_working_set_up_is_all_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "library.sqlite3"
    Library.open(path).close()
    before = path.read_bytes()
    code, lines = check(["--library", str(path)], monkeypatch, capsys)
    assert code == 0, lines
    assert set(lines) == {"library", "models", "hosted", "port"}
    assert all(line.startswith("ok") for line in lines.values()), lines
    assert "0 highlights" in lines["library"]
    assert "embedded library" in lines["hosted"]
    assert path.read_bytes() == before and sorted(tmp_path.iterdir()) == [path]


def test_a_new_library_path_is_not_created_by_checking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "library.sqlite3"
    code, lines = check(["--library", str(path)], monkeypatch, capsys)
    assert code == 0 and "created on first use" in lines["library"]
    assert not path.exists()


def test_each_problem_is_a_line_with_its_fix_and_the_status_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    contacts = tmp_path / "contacts.db"
    with sqlite3.connect(contacts) as conn:
        conn.execute("CREATE TABLE contacts (name TEXT)")
    conn.close()
    before = contacts.read_bytes()
    env = {"SCREVI_API_KEY": "sk_live_check", "SCREVI_BASE_URL": "http://127.0.0.1:9"}
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = str(busy.getsockname()[1])
        code, lines = check(
            [
                "--library",
                str(contacts),
                "--mirror",
                str(tmp_path / "none.sqlite3"),
                "--port",
                taken,
            ],
            monkeypatch,
            capsys,
            env,
        )
    assert code == 1
    assert lines["library"].startswith("PROBLEM") and "not a screvi-mcp library" in lines["library"]
    assert lines["hosted"].startswith("PROBLEM") and "/api/v1" in lines["hosted"]
    assert lines["mirror"].startswith("PROBLEM") and "screvi-mcp sync" in lines["mirror"]
    assert lines["port"].startswith("PROBLEM") and taken in lines["port"]
    assert contacts.read_bytes() == before
    assert "sk_live_check" not in str(lines)


def test_the_hosted_key_is_tried_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream = tmp_path / "upstream.sqlite3"
    library = Library.open(upstream)
    _, secret = keys.create_key(library, "check", write=False)
    library.close()
    local = ["--library", str(tmp_path / "library.sqlite3")]
    with asgi_server(create_app(upstream)) as root:
        env = {"SCREVI_API_KEY": secret, "SCREVI_BASE_URL": f"{root}/api/v1"}
        code, lines = check(local, monkeypatch, capsys, env)
        assert code == 0 and "not contacted" in lines["hosted"]
        code, lines = check([*local, "--online"], monkeypatch, capsys, env)
        assert code == 0 and "accepted the key" in lines["hosted"], lines
        wrong = {**env, "SCREVI_API_KEY": "sk_live_" + "0" * 40}
        code, lines = check([*local, "--online"], monkeypatch, capsys, wrong)
        assert code == 1 and "refused the key" in lines["hosted"], lines
    nobody = {**env, "SCREVI_BASE_URL": f"http://127.0.0.1:{free_port()}/api/v1"}
    code, lines = check([*local, "--online"], monkeypatch, capsys, nobody)
    assert code == 1 and "nothing answers" in lines["hosted"], lines
    assert secret not in str(lines)
