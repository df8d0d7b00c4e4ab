"""The WAL is checkpointed off the writers' path, stays within its bound, and loses nothing.

The bounds are lowered here (a 64 MiB WAL takes thousands of highlights to fill); the code
paths are the ones a full-size library takes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from screvi_mcp.local.api.bodies import HighlightCreate
from screvi_mcp.local.storage import checkpointer, db
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights

WAIT_SECONDS = 60.0  # a bound on waiting for the subprocess, not a timing check
HARD = 1024 * 1024
KEEP = 256 * 1024


def _batch(start: int, size: int = 100) -> list[HighlightCreate]:
    return [
        HighlightCreate(
            content=f"passage {n} about tides, lanterns and the {n % 17}th harbour wall",
            note=f"note {n}",
            tags=[f"tag-{n % 5}", f"topic-{n % 3}"],
        )
        for n in range(start, start + size)
    ]


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpointer, "WAL_HARD_BYTES", HARD)
    monkeypatch.setattr(checkpointer, "RESTART_PAGES", 64)
    monkeypatch.setattr(db, "WAL_KEEP_BYTES", KEEP)


def _wal_size(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_the_wal_stays_bounded_under_a_stream_of_bulk_creates(
    tmp_path: Path, small_bounds: None
) -> None:
    path = tmp_path / "library.sqlite3"
    library = Library.open(path)
    sizes: list[int] = []
    commit_sizes: list[int] = []
    for start in range(0, 4000, 100):
        before = _wal_size(path)
        highlights.create_many(library, _batch(start), bulk=True)
        sizes.append(_wal_size(path))
        commit_sizes.append(max(0, sizes[-1] - before))
    # Without any checkpoint these 4,000 highlights make a WAL of several MiB.
    assert library.checkpointer.passes > 0
    # The bound, plus the one commit that crossed it.
    assert max(sizes) <= HARD + max(commit_sizes)
    count = library.connection().execute("SELECT count(*) FROM highlights").fetchone()[0]
    assert count == 4000
    assert library.connection().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    library.close()
    reopened = Library.open(path)
    hits = reopened.connection().execute(
        "SELECT count(*) FROM highlights_fts WHERE highlights_fts MATCH 'lanterns'"
    )
    assert hits.fetchone()[0] == 4000
    reopened.close()


def test_a_commit_past_the_bound_waits_for_the_background_pass_and_starts_the_wal_over(
    tmp_path: Path, small_bounds: None
) -> None:
    """SQLite refuses a second checkpointer at once: the commit must wait for the thread's
    pass, not skip its own (that skip let the WAL reach 180 MiB at 100k)."""
    path = tmp_path / "library.sqlite3"
    library = Library.open(path)
    highlights.create_many(library, _batch(0), bulk=True)
    held = threading.Event()
    release = threading.Event()

    def hold_the_pass() -> None:
        with library.checkpointer._pass_lock:
            held.set()
            release.wait(WAIT_SECONDS)

    holder = threading.Thread(target=hold_the_pass)
    holder.start()
    assert held.wait(WAIT_SECONDS)
    forced_before = library.checkpointer.forced

    def write_past_the_bound() -> None:
        start = 100
        while _wal_size(path) <= HARD:
            highlights.create_many(library, _batch(start), bulk=True)
            start += 100

    writer = threading.Thread(target=write_past_the_bound)
    writer.start()
    while _wal_size(path) <= HARD and writer.is_alive():
        writer.join(0.01)
    # The commit that crossed the bound is waiting for the pass, not skipping its checkpoint.
    writer.join(0.5)
    assert writer.is_alive()
    assert library.checkpointer.forced == forced_before
    release.set()
    writer.join(WAIT_SECONDS)
    holder.join(WAIT_SECONDS)
    assert library.checkpointer.forced == forced_before + 1
    highlights.create_many(library, _batch(100_000), bulk=True)
    assert _wal_size(path) < HARD  # started over and cut back
    library.close()


def test_close_stops_the_checkpoint_thread(tmp_path: Path) -> None:
    library = Library.open(tmp_path / "library.sqlite3")
    highlights.create_many(library, _batch(0, 10), bulk=True)
    thread = library.checkpointer._thread
    assert thread is not None
    library.close()
    assert not thread.is_alive()


_WRITER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from screvi_mcp.local.storage import checkpointer, db
    from screvi_mcp.local.api.bodies import HighlightCreate
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights

    checkpointer.WAL_HARD_BYTES = 1024 * 1024
    checkpointer.RESTART_PAGES = 64
    db.WAL_KEEP_BYTES = 256 * 1024
    library = Library.open(Path(sys.argv[1]))
    n = 0
    while True:
        items = [
            HighlightCreate(content=f"written {n + i} before the kill", tags=["kill"])
            for i in range(100)
        ]
        created = highlights.create_many(library, items, bulk=True)
        n += 100
        print(json.dumps([item["id"] for item in created]), flush=True)
    """
)


@pytest.mark.skipif(os.name != "posix", reason="kill -9")
def test_a_writer_killed_while_checkpoints_run_loses_no_acknowledged_highlight(
    tmp_path: Path,
) -> None:
    path = tmp_path / "library.sqlite3"
    Library.open(path).close()
    process = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acknowledged: list[str] = []
    assert process.stdout is not None
    try:
        # 30 answered commits: about a dozen background passes and several restarts of the
        # WAL have run by then, and more are under way when the kill lands.
        while len(acknowledged) < 3000:
            line = process.stdout.readline()
            assert line, process.stderr.read() if process.stderr else "writer ended"
            acknowledged.extend(json.loads(line))
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(WAIT_SECONDS)
    library = Library.open(path)
    conn = library.connection()
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    found = {
        row[0]
        for row in conn.execute(
            "SELECT id FROM highlights WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(acknowledged),),
        )
    }
    assert found == set(acknowledged)
    # The keyword index came through whole too: every stored highlight is findable.
    stored = conn.execute("SELECT count(*) FROM highlights").fetchone()[0]
    indexed = conn.execute(
        "SELECT count(*) FROM highlights_fts WHERE highlights_fts MATCH 'kill'"
    ).fetchone()[0]
    assert indexed == stored >= len(acknowledged)
    library.close()


def test_a_long_reader_does_not_make_every_commit_wait_for_a_restart(
    tmp_path: Path, small_bounds: None
) -> None:
    """A reader on an old snapshot keeps the WAL from being reused, so RESTART cannot finish:
    the commit past the bound tries once, then only after the WAL grew another quarter."""
    path = tmp_path / "library.sqlite3"
    library = Library.open(path)
    highlights.create_many(library, _batch(0), bulk=True)
    reader = db.connect(path)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM highlights").fetchone()  # holds its snapshot
    try:
        start, past_the_bound = 100, 0
        while _wal_size(path) <= 2 * HARD:  # small commits: several per quarter of the bound
            highlights.create_many(library, _batch(start, 2), bulk=True)
            start += 2
            past_the_bound += _wal_size(path) > HARD
        assert past_the_bound >= 8, past_the_bound
        # Once when it crossed the bound, then once per quarter of it: 2 MiB is 4 quarters.
        assert 1 <= library.checkpointer.forced <= 6, (library.checkpointer.forced, past_the_bound)
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    count = library.connection().execute("SELECT count(*) FROM highlights").fetchone()[0]
    assert count == start
    library.close()
