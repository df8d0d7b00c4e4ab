"""Nothing is harmed at the door: every command that opens a library refuses, untouched and
in one line naming the file, a SQLite file that is not a library (another application's
database), a damaged library and one written by a newer screvi-mcp.

Each entry runs in-process through `cli.main` (refusals return before serving or sending).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.test_startup_checks import Result, Screvi

from screvi_mcp.cli import main
from screvi_mcp.local.storage import db
from screvi_mcp.local.storage.library import Library

FIXTURES = Path(__file__).parent / "transfer" / "fixtures"
HOSTED = {"SCREVI_API_KEY": "sk_live_door", "SCREVI_BASE_URL": "http://127.0.0.1:9/api/v1"}


def entries(library: Path, scratch: Path) -> Iterator[tuple[tuple[str, ...], dict[str, str]]]:
    """(argv, environment) of every command that opens the library file."""
    lib = str(library)
    yield ("--library", lib), {}
    yield ("--transport", "streamable-http", "--port", "0", "--library", lib), {}
    yield ("api", "--port", "0", "--library", lib), {}
    yield ("keys", "create", "--name", "door", "--library", lib), {}
    yield ("import", "kindle", str(FIXTURES / "clippings_en.txt"), "--library", lib), {}
    yield ("export", "csv", str(scratch / "out.csv"), "--library", lib), {}
    yield ("sync", "--library", lib), HOSTED
    yield ("--mirror", "--library", lib), {}
    yield ("--mirror", "--library", lib), HOSTED


@pytest.fixture
def screvi(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Screvi:
    """`screvi-mcp ARGV` in-process, with only the SCREVI_ variables given."""

    def run(*argv: str, env: dict[str, str] | None = None) -> Result:
        for key in [key for key in os.environ if key.startswith("SCREVI_")]:
            monkeypatch.delenv(key)
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        code = main(list(argv))
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


def snapshot(folder: Path) -> dict[str, bytes]:
    return {entry.name: entry.read_bytes() for entry in sorted(folder.iterdir())}


def assert_refused_untouched(screvi: Screvi, library: Path, scratch: Path, *phrases: str) -> None:
    before = snapshot(library.parent)
    for argv, env in entries(library, scratch):
        result: Result = screvi(*argv, env=env)
        lines = result.stderr.strip().splitlines()
        assert result.returncode != 0, (argv, result.stderr)
        assert len(lines) == 1, (argv, result.stderr)
        assert lines[0].startswith("screvi-mcp"), (argv, lines)
        assert str(library) in lines[0], (argv, lines)
        for phrase in phrases:
            assert phrase in lines[0], (argv, lines)
        assert "Traceback" not in result.stderr and "again" not in lines[0], (argv, lines)
        assert snapshot(library.parent) == before, argv  # byte for byte, no file added


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "lib").mkdir()
    (tmp_path / "scratch").mkdir()
    return tmp_path / "lib", tmp_path / "scratch"


def contacts_database(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        conn.executemany("INSERT INTO contacts VALUES (?, ?)", [("Ada", "1"), ("Alan", "2")])
    conn.close()


def test_another_applications_database_is_refused_untouched_by_every_entry(
    folders: tuple[Path, Path], screvi: Screvi
) -> None:
    contacts = folders[0] / "contacts.db"
    contacts_database(contacts)
    assert_refused_untouched(screvi, contacts, folders[1], "not a screvi-mcp library")


def test_library_open_refuses_another_applications_database(tmp_path: Path) -> None:
    contacts = tmp_path / "contacts.db"
    contacts_database(contacts)
    before = contacts.read_bytes()
    with pytest.raises(db.LibraryRefused, match="another application"):
        Library.open(contacts)
    assert contacts.read_bytes() == before


def application_id(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA application_id").fetchone()[0])
    finally:
        conn.close()


def test_a_library_carries_its_mark_and_an_older_one_gets_it_on_open(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    Library.open(path).close()
    assert application_id(path) == db.APPLICATION_ID
    # A library made before the mark existed: recognised by its migrations, then marked.
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 0")
    conn.close()
    Library.open(path).close()
    assert application_id(path) == db.APPLICATION_ID


def test_an_empty_sqlite_file_is_a_new_library(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    sqlite3.connect(path).execute("VACUUM").connection.close()  # a header, no tables
    Library.open(path).close()
    assert application_id(path) == db.APPLICATION_ID


def library_with_pages(path: Path) -> None:
    library = Library.open(path)
    with library.write() as conn:
        conn.executemany(
            "INSERT INTO settings(key, value) VALUES (?, ?)",
            [(f"filler-{n}", "x" * 900) for n in range(400)],
        )
    library.close()


def test_a_library_damaged_in_the_middle_is_named_by_every_entry(
    folders: tuple[Path, Path], screvi: Screvi
) -> None:
    path = folders[0] / "library.sqlite3"
    library_with_pages(path)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 4096] = b"\x5a" * 4096  # one page of the settings table, mangled
    path.write_bytes(bytes(data))
    assert_refused_untouched(screvi, path, folders[1], "damaged", "backup")


def test_a_library_from_a_newer_version_is_refused_by_every_entry(
    folders: tuple[Path, Path], screvi: Screvi
) -> None:
    path = folders[0] / "library.sqlite3"
    Library.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations VALUES ('9999_from_the_future.sql', 'x')")
    conn.commit()
    conn.close()
    assert_refused_untouched(screvi, path, folders[1], "newer screvi-mcp", "9999")
    with pytest.raises(db.LibraryRefused, match="newer screvi-mcp"):
        Library.open(path)


@contextmanager
def unwritable(folder: Path) -> Iterator[None]:
    """A folder nobody may create files in: by its mode, or for root (whom modes do not
    stop) by the immutable attribute, where the file system has it."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(0o700)
        return
    if (
        shutil.which("chattr") is None
        or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode
    ):
        pytest.skip("root writes into any folder, and chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_a_library_in_a_folder_sqlite_cannot_write_to_is_named(
    folders: tuple[Path, Path], screvi: Screvi
) -> None:
    path = folders[0] / "library.sqlite3"
    Library.open(path).close()
    with unwritable(folders[0]):
        assert_refused_untouched(screvi, path, folders[1], "not writable")


def marked_but_empty(path: Path, pragma: str) -> None:
    """A database another application has claimed (its mark or its schema version set, as
    many do first) before creating any table."""
    conn = sqlite3.connect(path)
    conn.execute(pragma)
    conn.close()


@pytest.mark.parametrize("pragma", ["PRAGMA application_id = 12345", "PRAGMA user_version = 7"])
def test_a_table_less_database_claimed_by_another_application_is_refused_untouched(
    folders: tuple[Path, Path], screvi: Screvi, pragma: str
) -> None:
    claimed = folders[0] / "claimed.db"
    marked_but_empty(claimed, pragma)
    assert_refused_untouched(screvi, claimed, folders[1], "not a screvi-mcp library")
