"""`screvi-mcp sync` as a new user meets it: odd --library paths, a first run that fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp import cli

# Nothing listens here: a check that must happen before any request is shown to.
NOBODY = "http://127.0.0.1:18799/api/v1"


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
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
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
        code, err = _sync(capsys, monkeypatch, library, key="sk_live_x", base_url=NOBODY)
        assert code == 2, err
        assert expected in err and "Traceback" not in err
        assert "sk_live_x" not in err
    assert notes.read_text(encoding="utf-8") == "not a library\n"
    assert not typo.parent.exists()
