"""`screvi-mcp sync` as a new user meets it: odd --library paths, a first run that fails."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mirror_testkit import StandIn, seed
from test_sync import assert_same

from screvi_mcp import cli
from testsupport.servers import free_port


@pytest.fixture
def nobody() -> str:
    """An API root where nothing listens (a port free a moment ago, chosen per test): a
    check that must happen before any request is shown to, or the connection is refused."""
    return f"http://127.0.0.1:{free_port()}/api/v1"


def _sync(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    library: Path,
    *,
    key: str,
    base_url: str,
) -> tuple[int, str]:
    monkeypatch.setenv("SCREVI_API_KEY", key)
    monkeypatch.setenv("SCREVI_BASE_URL", base_url)
    code = cli.main(["sync", "--library", str(library), "--quiet"])
    out, err = capsys.readouterr()
    assert out == ""
    return code, err


def test_odd_library_paths_are_refused_in_one_line(
    tmp_path: Path,
    nobody: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A folder or a file that is not a library ended in a SQLite traceback; a typo in the
    folder silently made a new mirror there. Refused as every other command refuses them."""
    notes = tmp_path / "notes.txt"
    notes.write_text("not a library\n", encoding="utf-8")
    typo = tmp_path / "no-such-folder" / "mirror.sqlite3"
    for library, expected in (
        (tmp_path, "is a directory"),
        (notes, "is not a screvi-mcp library"),
        (typo, "does not exist"),
    ):
        code, err = _sync(capsys, monkeypatch, library, key="sk_live_x", base_url=nobody)
        assert code == 2, err
        assert expected in err and "Traceback" not in err
        assert "sk_live_x" not in err
    assert notes.read_text(encoding="utf-8") == "not a library\n"
    assert not typo.parent.exists()


def test_a_first_sync_refused_by_the_server_does_not_bind_the_mirror_to_its_mistake(
    stand_in: StandIn,
    mirror_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A new user's first sync with a mistyped key or address fails, as it should. It used
    to record that key and address as the mirror's identity all the same, so the corrected
    command was refused ("synced with another API key", "mirrors ..., not ...") although
    nothing had ever been copied, and the default mirror file had to be found and deleted."""

    async def add_data() -> None:
        async with stand_in.client() as client:
            await seed(client)

    anyio.run(add_data)
    mirror_path.parent.mkdir(parents=True, exist_ok=True)
    wrong_key = "sk_live_" + "0" * 32
    code, err = _sync(capsys, monkeypatch, mirror_path, key=wrong_key, base_url=stand_in.base_url)
    assert code == 1 and "unknown or has been revoked" in err and wrong_key not in err

    code, err = _sync(
        capsys, monkeypatch, mirror_path, key=stand_in.key, base_url=stand_in.base_url
    )
    assert code == 0, err
    assert "Full copy finished" in err
    anyio.run(assert_same, stand_in, mirror_path)

    # Once something was copied, the mirror belongs to that account and address.
    code, err = _sync(capsys, monkeypatch, mirror_path, key=wrong_key, base_url=stand_in.base_url)
    assert code == 1 and "--new-key" in err


def test_a_base_url_short_of_the_api_root_is_refused_as_the_server_refuses_it(
    tmp_path: Path,
    nobody: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`screvi-mcp` itself refuses a SCREVI_BASE_URL that does not end at /api/v1 with a line
    saying which address to use; `sync` sent requests to it and reported "No such endpoint:
    GET /tags ... run again to continue", which no re-run could fix."""
    library = tmp_path / "mirror.sqlite3"
    code, err = _sync(
        capsys, monkeypatch, library, key="sk_live_x", base_url=nobody.removesuffix("/api/v1")
    )
    assert code == 2, err
    assert f"use {nobody}" in err and "run again" not in err
    assert not library.exists()


def test_a_refused_key_is_reported_as_a_key_problem_not_as_something_to_retry(
    stand_in: StandIn,
    mirror_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mirror_path.parent.mkdir(parents=True, exist_ok=True)
    wrong_key = "sk_live_" + "1" * 32
    code, err = _sync(capsys, monkeypatch, mirror_path, key=wrong_key, base_url=stand_in.base_url)
    assert code == 1 and wrong_key not in err
    assert "SCREVI_API_KEY" in err and "run again to continue" not in err


def test_an_address_where_nothing_answers_is_reported_at_once_not_after_minutes(
    tmp_path: Path,
    nobody: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mistyped port or no network: the sync's patient retries (made for an outage in the
    middle of a long run) kept a new user waiting about 80 s for "run again". The first
    contact is tried briefly; nothing is created when nobody answers."""
    import time

    library = tmp_path / "mirror.sqlite3"
    started = time.monotonic()
    code, err = _sync(capsys, monkeypatch, library, key="sk_live_x", base_url=nobody)
    assert time.monotonic() - started < 15, err
    assert code == 1, err
    assert f"nothing answers at {nobody}" in err
    assert "SCREVI_BASE_URL" in err and "Traceback" not in err and "sk_live_x" not in err
    assert not library.exists()
