"""Opening the library's SQLite file: pragmas and numbered migrations.

Migrations are plain SQL files in `migrations/`, applied in file-name order and recorded by
name in `schema_migrations`, so that independent modules can each add their own step.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from screvi_mcp.config import ConfigurationProblem
from screvi_mcp.local.storage import clock

BUSY_TIMEOUT_MS = 10_000
# The WAL is checkpointed by a background thread after commits (local/storage/checkpointer.py); a
# commit checkpoints it itself only past this many pages (64 MiB at 4 KiB pages), SQLite's
# default being 1,000. After a checkpoint has caught up, the file is cut back to
# WAL_KEEP_BYTES the next time it is reused.
WAL_HARD_PAGES = 16_384
WAL_KEEP_BYTES = 16 * 1024 * 1024
# The library's mark in the SQLite header (`PRAGMA application_id`, bytes 68-71): "Scrv".
# Set on every library this program opens; a file carrying another application's mark, or
# tables without ours, is someone else's database and is never written to.
APPLICATION_ID = 0x53637276
# The first migration: a file without the mark but with this row was made by an older
# screvi-mcp, before the mark existed.
FIRST_MIGRATION = "0001_initial.sql"


class LibraryRefused(ConfigurationProblem):
    """The file at a library path is not one this program may open; the message says which
    file, why, and what to do. Raised before anything is written to it."""


def read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot change the file, nor leave a file beside it.

    Without a write-ahead log beside it, nothing but the file holds data and the file is
    read as immutable: opening a WAL-mode database read-only would otherwise create (and
    leave) its -wal and -shm files. With a log present, it is read with it.
    """
    wal = path.with_name(path.name + "-wal")
    flag = "mode=ro" if wal.exists() else "immutable=1"
    return sqlite3.connect(f"{path.resolve().as_uri()}?{flag}", uri=True)


def damaged(path: Path, reason: object) -> str:
    """What to say of a library SQLite cannot read: nothing a retry would fix."""
    return (
        f"the library {path} is damaged ({reason}); restore it from a backup, or point "
        "--library at another file (a new path starts an empty library)"
    )


# SQLite's primary result codes for a file whose pages no longer read as a database:
# SQLITE_CORRUPT ("database disk image is malformed") and SQLITE_NOTADB ("file is not a
# database"). Either way a retry reads the same pages: only a restore helps.
_DAMAGE_CODES = frozenset({11, 26})


def is_damage(error: BaseException) -> bool:
    """Whether `error` is SQLite finding the library file damaged (not a lock, not a bug)."""
    code = getattr(error, "sqlite_errorcode", None)
    return (
        isinstance(error, sqlite3.DatabaseError)
        and code is not None
        and code & 0xFF in (_DAMAGE_CODES)
    )


def check_is_library(path: Path) -> None:
    """Refuse, without writing a byte, a SQLite file that is not a library of ours (another
    application's database) or one written by a newer screvi-mcp (a migration this version
    does not know). A missing, empty or table-less file is a new library, and so is one
    holding only our bookkeeping table, as a library being created by another process does."""
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        conn = read_only(path)
        try:
            mark = int(conn.execute("PRAGMA application_id").fetchone()[0])
            # Ours is always 0; another application's schema version claims the file.
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = {  # SQLite's own objects (a primary key's index) aside
                row[0]
                for row in conn.execute(
                    "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                )
            }
            applied = (
                {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
                if "schema_migrations" in tables
                else set()
            )
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise LibraryRefused(damaged(path, exc)) from exc
    # Only an empty `schema_migrations`: another process is making this library right now
    # (`_pending` creates that table before the migrations' transaction).
    # Another application's mark (or schema version) claims a file even before its tables
    # exist; an unmarked file with tables but not our first migration is someone else's too.
    claimed = mark != 0 or version != 0
    foreign = tables - {"schema_migrations"} and FIRST_MIGRATION not in applied
    if mark != APPLICATION_ID and (claimed or foreign):
        raise LibraryRefused(
            f"{path} is a SQLite database of another application, not a screvi-mcp library; "
            "it was left untouched. Point --library at a library file or at a new path"
        )
    unknown = sorted(applied - {name for name, _ in migration_steps()})
    if unknown:
        raise LibraryRefused(
            f"the library {path} was written by a newer screvi-mcp (it has migration "
            f"{', '.join(unknown)}, which this version does not know); upgrade screvi-mcp to "
            "open it, or point --library at another file. It was left untouched"
        )


def is_busy(error: BaseException) -> bool:
    """A transient refusal: another connection held the lock past our wait (`database is
    locked`, `database is busy`). Trying again later succeeds; nothing is wrong with the file."""
    text = str(error)
    return isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def connect(path: Path) -> sqlite3.Connection:
    """A connection with the pragmas every connection of the library needs."""
    conn = sqlite3.connect(
        path,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,  # explicit BEGIN/COMMIT: we decide where transactions start
        check_same_thread=False,
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    _enter_wal(conn)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_HARD_PAGES}")
    conn.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    return conn


def _enter_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting out another process doing the same on a fresh file.

    Two connections converting a new file at once both read it, then both need it alone;
    SQLite answers one of them "database is locked" at once instead of calling the busy
    handler (it would otherwise deadlock). That connection simply tries again, within the
    same bound as any other wait for the lock.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def migration_steps() -> list[tuple[str, str]]:
    """(name, sql) of every bundled migration, in order."""
    folder = resources.files("screvi_mcp.local.storage") / "migrations"
    steps = [
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".sql")
    ]
    return sorted(steps)


def statements(script: str) -> Iterator[str]:
    """The complete SQL statements of a script (trigger bodies hold `;` and stay whole)."""
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \t\r\n;"):
                yield buffer
            buffer = ""
    # A trailing fragment without `;` is a comment or whitespace (sqlite would ignore it).


def migrate(conn: sqlite3.Connection, steps: list[tuple[str, str]] | None = None) -> list[str]:
    """Apply the migrations this file has not seen yet; returns the names applied.
    `steps` narrows them (review's own state file takes only its own step).

    All pending steps run in one write transaction, and the list of applied steps is read
    inside it: several processes opening a fresh file at once queue on the lock, and each
    finds the work the one before it did (no `table settings already exists`). A failed step
    rolls every pending step back, so a file is never left half-migrated.
    """
    steps = migration_steps() if steps is None else steps
    if _pending(conn, steps) == [] and _marked(conn):
        return []  # the common case: no write lock taken just to open a library
    applied: list[str] = []
    with transaction(conn):
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for name, sql in _pending(conn, steps):
            for statement in statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                (name, clock.now()),
            )
            applied.append(name)
    return applied


def _marked(conn: sqlite3.Connection) -> bool:
    return int(conn.execute("PRAGMA application_id").fetchone()[0]) == APPLICATION_ID


def _pending(conn: sqlite3.Connection, steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Steps not recorded yet; the bookkeeping table is created when missing."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    return [(name, sql) for name, sql in steps if name not in done]


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction taken up front (BEGIN IMMEDIATE) to avoid upgrade deadlocks."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
