"""Opening a library file: migrations under one write lock, old rows brought up to date."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from screvi_mcp.local.storage import db
from screvi_mcp.local.storage.library import Library

# Each process says it is ready on stdout, waits for the go file, then opens (and so
# migrates) the same fresh library.
_OPENER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from screvi_mcp.local.storage.library import Library
    go = Path(sys.argv[2])
    print("ready", flush=True)
    # A child cannot import the tests' polling helper; it spins briefly so that all open
    # together once the go file appears (bounded: a lost parent must not leave it polling).
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            sys.exit("the go file never came")
        time.sleep(0.002)
    library = Library.open(sys.argv[1])
    library.set_setting("opened-by-" + sys.argv[3], "yes")
    library.close()
    """
)


def test_a_library_another_process_is_creating_is_not_taken_for_a_foreign_file(
    tmp_path: Path,
) -> None:
    # What a second opener sees while the first is migrating: the bookkeeping table, made
    # before the migrations' transaction, and nothing else (no mark yet, no step recorded).
    path = tmp_path / "library.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    library = Library.open(path)
    library.close()


@pytest.mark.parametrize("processes", [3, 4])
def test_processes_opening_a_fresh_library_together_all_succeed(
    tmp_path: Path, processes: int
) -> None:
    for trial in range(4):
        path = tmp_path / f"trial-{trial}" / "library.sqlite3"
        path.parent.mkdir()
        go = tmp_path / f"go-{trial}"
        children = [
            subprocess.Popen(
                [sys.executable, "-c", _OPENER, str(path), str(go), str(n)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(processes)
        ]
        for child in children:  # every interpreter started and reached the wait
            assert child.stdout is not None
            if child.stdout.readline() != "ready\n":  # "" when it died first
                pytest.fail(f"an opener failed to start: {child.communicate(timeout=60)[1]}")
        go.touch()
        failures = []
        for child in children:
            _, err = child.communicate(timeout=120)
            if child.returncode != 0:
                failures.append(err.strip().splitlines()[-1:] or [f"exit {child.returncode}"])
        assert not failures, f"trial {trial}: {failures}"
        library = Library.open(path)
        try:
            names = [
                row[0]
                for row in library.connection().execute(
                    "SELECT name FROM schema_migrations ORDER BY name"
                )
            ]
            assert names == [name for name, _ in db.migration_steps()]
            for n in range(processes):
                assert library.get_setting(f"opened-by-{n}") == "yes"
        finally:
            library.close()


def test_migrating_twice_is_harmless(tmp_path: Path) -> None:
    library = Library.open(tmp_path / "library.sqlite3")
    try:
        assert db.migrate(library.connection()) == []
    finally:
        library.close()


def test_dates_stored_without_a_padded_year_are_normalised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows written before the fix (`500-01-01...`) are rewritten by migration 0007."""
    path = tmp_path / "library.sqlite3"
    every_step = db.migration_steps()
    before = [step for step in every_step if step[0] < "0007"]
    monkeypatch.setattr(db, "migration_steps", lambda: before)
    library = Library.open(path)
    with library.write() as conn:
        conn.execute(
            "INSERT INTO highlights(id, content, date, created_at, updated_at) VALUES "
            "('h1', 'old', '500-01-01T00:00:00.000000Z', '2024-01-01T00:00:00.000000Z', "
            "'2024-01-01T00:00:00.000000Z'), "
            "('h2', 'older', '9-02-03T04:05:06.000000Z', '2024-01-01T00:00:00.000000Z', "
            "'2024-01-01T00:00:00.000000Z'), "
            "('h3', 'new', '2020-01-01T00:00:00.000000Z', '2024-01-01T00:00:00.000000Z', "
            "'2024-01-01T00:00:00.000000Z')"
        )
    library.close()
    monkeypatch.setattr(db, "migration_steps", lambda: every_step)
    library = Library.open(path)
    try:
        dates = dict(library.connection().execute("SELECT id, date FROM highlights").fetchall())
    finally:
        library.close()
    assert dates == {
        "h1": "0500-01-01T00:00:00.000000Z",
        "h2": "0009-02-03T04:05:06.000000Z",
        "h3": "2020-01-01T00:00:00.000000Z",
    }
