"""The `screvi-mcp` commands that manage the embedded library: keys, settings, `api`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from screvi_mcp.cli import main
from screvi_mcp.local.api import keys
from screvi_mcp.local.api.app import RATE_LIMIT_SETTING
from screvi_mcp.local.api.auth import SUBSCRIPTION_SETTING, identify
from screvi_mcp.local.storage.library import Library
from testsupport.polling import wait_until
from testsupport.servers import free_port


@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    return tmp_path / "library.sqlite3"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_keys_create_prints_the_key_once_on_stdout(
    library_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "keys", "create", "--library", str(library_path), "--name", "laptop", "--write"
    )
    assert code == 0
    secret = out.strip()
    assert out == secret + "\n"  # nothing else on stdout: scripts can capture it
    assert secret.startswith("sk_live_") and len(secret) > 30
    assert secret not in err
    library = Library.open(library_path)
    try:
        record = keys.find_key(library, secret)
        assert record is not None and record.name == "laptop"
        assert record.can_write and not record.legacy
        assert record.id in err
        # Stored hashed, never as given.
        dump = "\n".join(library.connection().iterdump())
        assert secret not in dump
    finally:
        library.close()


def test_read_only_and_legacy_keys(library_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, ro_out, _ = run(capsys, "keys", "create", "--library", str(library_path), "--name", "ro")
    _, legacy_out, _ = run(
        capsys, "keys", "create", "--library", str(library_path), "--name", "old", "--legacy"
    )
    library = Library.open(library_path)
    try:
        ro = keys.find_key(library, ro_out.strip())
        legacy = keys.find_key(library, legacy_out.strip())
        assert ro is not None and ro.scopes == frozenset({"read"}) and not ro.can_write
        assert legacy is not None and legacy.legacy and not legacy.can_write
        assert not legacy_out.strip().startswith("sk_live_")
    finally:
        library.close()


def test_keys_list_never_shows_a_key_and_revoke_works(
    library_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "keys", "create", "--library", str(library_path), "--name", "ci")
    secret = out.strip()
    code, listing, _ = run(capsys, "keys", "list", "--library", str(library_path))
    assert code == 0
    assert "ci" in listing and "active" in listing
    assert secret not in listing
    assert secret[:12] in listing  # the hint, to recognise it
    library = Library.open(library_path)
    key_id = keys.list_keys(library)[0].id
    library.close()
    code, _, err = run(capsys, "keys", "revoke", "--library", str(library_path), key_id)
    assert code == 0 and key_id in err
    _, listing, _ = run(capsys, "keys", "list", "--library", str(library_path))
    assert "revoked" in listing and secret not in listing
    library = Library.open(library_path)
    assert keys.find_key(library, secret) is None
    library.close()
    again, _, err = run(capsys, "keys", "revoke", "--library", str(library_path), key_id)
    assert again == 1 and "no active key" in err


def test_library_settings(library_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ("--library", str(library_path))
    assert run(capsys, "library", "subscription", "inactive", *base)[0] == 0
    library = Library.open(library_path)
    assert library.get_setting(SUBSCRIPTION_SETTING) == "0"
    library.close()
    assert run(capsys, "library", "subscription", "active", *base)[0] == 0
    assert run(capsys, "library", "rate-limit", "7", *base)[0] == 0
    library = Library.open(library_path)
    assert library.get_setting(SUBSCRIPTION_SETTING) == "1"
    assert library.get_setting(RATE_LIMIT_SETTING) == "7"
    library.close()


def test_library_from_the_environment(
    library_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCREVI_LIBRARY", str(library_path))
    assert run(capsys, "keys", "create", "--name", "env")[0] == 0
    assert library_path.exists()


def test_api_command_serves_the_library(
    library_path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, out, _ = run(
        capsys, "keys", "create", "--library", str(library_path), "--name", "api", "--write"
    )
    secret = out.strip()
    assert run(capsys, "library", "rate-limit", "50", "--library", str(library_path))[0] == 0
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCREVI_")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from screvi_mcp.cli import main; sys.exit(main(sys.argv[1:]))",
            "api",
            "--library",
            str(library_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, trust_env=False, timeout=10) as client:

            def answering() -> bool:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                client.get("/health")  # any answer: it listens
                return True

            wait_until(
                answering,
                timeout=30,  # a bound on waiting for start-up, not a timing assertion
                what="screvi-mcp api did not answer /health",
                transient=(httpx.TransportError,),
            )
            created = client.post(
                "/api/v1/highlights", json={"content": "served"}, headers={"X-API-Key": secret}
            )
            assert created.status_code == 201, created.text
            listed = client.get("/api/v1/highlights", headers={"Authorization": f"Bearer {secret}"})
            assert listed.json()["data"][0]["content"] == "served"
            assert listed.headers["X-RateLimit-Limit"] == "50"  # the library's setting
            # A new setting applies to the running server, as the subscription does.
            assert run(capsys, "library", "rate-limit", "2", "--library", str(library_path))[0] == 0
            auth = {"X-API-Key": secret}
            answers = [client.get("/api/v1/tags", headers=auth) for _ in range(3)]
            assert [a.headers["X-RateLimit-Limit"] for a in answers] == ["2", "2", "2"]
            assert answers[-1].status_code == 429
            assert "Rate limit of 2 requests per minute" in answers[-1].json()["error"]
            assert client.get("/api/v1/highlights").json()["code"] == "missing_api_key"
            assert client.get("/skill.md").status_code == 200
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    # Nothing on stdout: it is not the place for logs.
    assert b"serving the library" in err


def test_a_key_used_once_shows_when_it_was_last_used(
    library_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "keys", "create", "--library", str(library_path), "--name", "used")
    _, listing, _ = run(capsys, "keys", "list", "--library", str(library_path))
    assert "never used" in listing
    library = Library.open(library_path)
    identify(library, out.strip())
    first = keys.list_keys(library)[0].last_used_at
    assert first is not None
    identify(library, out.strip())  # within the minute: not written again
    assert keys.list_keys(library)[0].last_used_at == first
    library.close()
    _, listing, _ = run(capsys, "keys", "list", "--library", str(library_path))
    assert f"last used {first}" in listing
