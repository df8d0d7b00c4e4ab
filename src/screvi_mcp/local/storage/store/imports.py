"""Imports: how items read from files (Kindle clippings, Readwise CSV) enter the library.

The file parsers live above local/ (in `screvi_mcp.transfer`); this module is their one way
in, so imported data obeys the library's own rules:

- the same validation as POST /sources and POST /highlights (`validate_source`,
  `validate_highlight`, using the request-body models);
- one transaction per batch: a batch lands whole or not at all;
- the library's listeners are told after each commit, so embeddings are computed;
- every item carries an *import key* (table `import_keys`). Writing a key that is already
  known updates its item instead of adding a duplicate, so a second run adds nothing.

Rules for an item found again: imported fields the file changed since the last import are
refreshed (a field the file did not change keeps the library's value, which the reader may
have edited; `import_keys.imported` remembers what was written), tags and metadata are added to
(never removed: the reader may have tagged it in the library since), an older version never
replaces a newer one (by the highlight's `date`), and an item the reader deleted from the
library stays deleted.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import field_validator

from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.inputs import HighlightCreate, SourceCreate, parse_body
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights as highlight_store
from screvi_mcp.local.storage.store import sources as source_store
from screvi_mcp.local.storage.store import tags as tag_store
from screvi_mcp.local.storage.store.refusals import Invalid, StoreError

# Imported sources may be of any type a library holds. `article` sources made by an import
# carry highlights only: no saved page behind them. `self` (the personal notes, one per
# library) is the library's own: an import adds to it, and makes it only when there is none.
IMPORTABLE_SOURCE_TYPES: tuple[str, ...] = (
    "book",
    "article",
    "tweet",
    "podcast",
    "video",
    "custom",
    "pdf",
    "self",
)


class ImportedSource(SourceCreate):
    """POST /sources' body and bounds, with the wider set of types an import may create."""

    type: str  # type: ignore[assignment]

    @field_validator("type", mode="before")
    @classmethod
    def _explain_type(cls, value: object) -> object:
        if not isinstance(value, str) or value not in IMPORTABLE_SOURCE_TYPES:
            raise ValueError("must be one of " + ", ".join(IMPORTABLE_SOURCE_TYPES))
        return value


class ImportRejected(ValueError):
    """An item the library's rules refuse; the message says which field and why."""


def _rejection(error: StoreError) -> ImportRejected:
    if isinstance(error, Invalid) and error.fields:
        reasons = "; ".join(f"{name} {reason}" for name, reason in error.fields.items())
        return ImportRejected(reasons)
    return ImportRejected(error.message)


def validate_source(payload: dict[str, Any]) -> ImportedSource:
    try:
        return parse_body(ImportedSource, payload)
    except Invalid as error:
        raise _rejection(error) from None


def validate_highlight(payload: dict[str, Any]) -> HighlightCreate:
    """POST /highlights' validation; the source is given by the batch, not the payload."""
    try:
        return parse_body(HighlightCreate, payload)
    except Invalid as error:
        raise _rejection(error) from None


@dataclass(frozen=True)
class SourceItem:
    key: str
    body: ImportedSource


@dataclass(frozen=True)
class HighlightItem:
    key: str
    source_key: str
    body: HighlightCreate
    # Keys an earlier version of this highlight was imported under (a passage the reader
    # later extended has a new location range, so a new key).
    earlier_keys: tuple[str, ...] = ()


class Outcome(StrEnum):
    created = "created"
    updated = "updated"
    unchanged = "unchanged"
    deleted = "deleted"  # deleted in the library by the reader: left deleted


@dataclass
class BatchOutcome:
    sources: dict[str, Outcome] = field(default_factory=dict)
    highlights: list[Outcome] = field(default_factory=list)


def known_keys(library: Library, kind: str, prefix: str = "") -> dict[str, str]:
    """Import keys of `kind` starting with `prefix`, mapped to their item ids."""
    rows = library.connection().execute(
        "SELECT key, target_id FROM import_keys WHERE kind = ? AND substr(key, 1, ?) = ?",
        (kind, len(prefix), prefix),
    )
    return {row["key"]: row["target_id"] for row in rows}


class ImportWriter:
    """Writes batches; use as a context manager.

    With `dry_run`, the whole run happens inside one transaction that is rolled back at the
    end: every rule is applied and every outcome counted exactly as for real, nothing stays,
    and no listener is told (nothing is embedded).
    """

    def __init__(
        self, library: Library, *, dry_run: bool = False, run_keys: frozenset[str] = frozenset()
    ) -> None:
        self.library = library
        self.dry_run = dry_run
        # Every highlight key of this run: a highlight one of them already claims is another
        # record of the same file, never the same passage from elsewhere (`_write_highlight`).
        self.run_keys = run_keys
        self._open = False

    def __enter__(self) -> ImportWriter:
        if self.dry_run:
            self.library.connection().execute("BEGIN IMMEDIATE")
        self._open = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.dry_run and self._open:
            self.library.connection().execute("ROLLBACK")
        self._open = False

    def write_batch(
        self, sources: Sequence[SourceItem], highlights: Sequence[HighlightItem]
    ) -> BatchOutcome:
        """Write one batch in one transaction; every highlight's source must be in `sources`.

        A rule the batch breaks while writing (a tag name shaped like an unknown tag id, say)
        rolls the whole batch back and raises `ImportRejected`.
        """
        try:
            with self._transaction() as conn:
                outcome, changed = _write(conn, sources, highlights, self.run_keys)
        except StoreError as error:
            raise _rejection(error) from None
        if not self.dry_run:
            self.library.notify_changed(changed)
        return outcome

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if not self.dry_run:
            with self.library.write() as conn:
                yield conn
            return
        conn = self.library.connection()
        conn.execute("SAVEPOINT import_batch")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK TO import_batch")
            conn.execute("RELEASE import_batch")
            raise
        conn.execute("RELEASE import_batch")


def _write(
    conn: sqlite3.Connection,
    sources: Sequence[SourceItem],
    highlights: Sequence[HighlightItem],
    run_keys: frozenset[str] = frozenset(),
) -> tuple[BatchOutcome, list[int]]:
    outcome = BatchOutcome()
    source_ids: dict[str, str | None] = {}
    for source in sources:
        source_id, result = _write_source(conn, source)
        source_ids[source.key] = source_id
        outcome.sources[source.key] = result
    changed: list[int] = []
    for index, item in enumerate(highlights):
        if item.source_key not in source_ids:
            raise ValueError(f"highlight {item.key!r}: its source is not in the batch")
        source_id = source_ids[item.source_key]
        if source_id is None:
            outcome.highlights.append(Outcome.deleted)
            continue
        result, seq = _write_highlight(conn, item, source_id, index, run_keys)
        outcome.highlights.append(result)
        if seq is not None:
            changed.append(seq)
    return outcome, changed


def _remember(
    conn: sqlite3.Connection,
    kind: str,
    key: str,
    target_id: str,
    imported: dict[str, str] | None = None,
) -> None:
    conn.execute(
        "INSERT INTO import_keys(kind, key, target_id, created_at, imported) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT(kind, key) DO UPDATE SET "
        "target_id = excluded.target_id, imported = coalesce(excluded.imported, imported)",
        (kind, key, target_id, clock.now(), None if imported is None else json.dumps(imported)),
    )


# The fields an import writes over on a re-run, and how it remembers what it wrote.
REFRESHED_FIELDS = ("content", "note", "url", "date", "location")


def _fingerprints(body: HighlightCreate) -> dict[str, str]:
    """A short hash of each refreshed field's value in the file (absent: not given)."""
    prints = {}
    for name in REFRESHED_FIELDS:
        value = getattr(body, name)
        if value is not None:
            prints[name] = hashlib.sha1(json.dumps(value, default=str).encode()).hexdigest()[:16]
    return prints


def _last_imported(conn: sqlite3.Connection, key: str) -> dict[str, str] | None:
    row = conn.execute(
        "SELECT imported FROM import_keys WHERE kind = 'highlight' AND key = ?", (key,)
    ).fetchone()
    if row is None or row["imported"] is None:
        return None
    value = json.loads(row["imported"])
    return value if isinstance(value, dict) else None


def _lookup(conn: sqlite3.Connection, kind: str, keys: Sequence[str]) -> str | None:
    for key in keys:
        row = conn.execute(
            "SELECT target_id FROM import_keys WHERE kind = ? AND key = ?", (kind, key)
        ).fetchone()
        if row is not None:
            return str(row["target_id"])
    return None


def _write_source(conn: sqlite3.Connection, item: SourceItem) -> tuple[str | None, Outcome]:
    body = item.body
    target = _lookup(conn, "source", [item.key])
    if target is None and body.type == "self":
        # The personal notes are one source whatever its name: add to the library's own.
        row = conn.execute(
            "SELECT id FROM sources WHERE type = 'self' AND deleted_at IS NULL"
        ).fetchone()
        if row is not None:
            target = str(row["id"])
            _remember(conn, "source", item.key, target)
    if target is None:
        # The same book may already be there: made by hand, or by another importer. Of the
        # same type first; then of any type, since a file format may not say the type (a
        # Readwise CSV: the importer guesses a book for a video, a custom collection or the
        # personal notes, and its own export read back must find them).
        row = conn.execute(
            "SELECT s.id FROM sources s LEFT JOIN articles a ON a.source_id = s.id "
            "WHERE a.source_id IS NULL AND s.deleted_at IS NULL "
            "AND lower(s.name) = lower(?) AND coalesce(lower(s.author), '') = lower(?) "
            "ORDER BY s.type != ?, s.created_at LIMIT 1",
            (body.name.strip(), body.author or "", body.type),
        ).fetchone()
        if row is None:
            source_id = source_store.insert(conn, body)
            _remember(conn, "source", item.key, source_id)
            return source_id, Outcome.created
        target = str(row["id"])
        _remember(conn, "source", item.key, target)
    row = conn.execute("SELECT * FROM sources WHERE id = ?", (target,)).fetchone()
    if row is None or row["deleted_at"] is not None:
        return None, Outcome.deleted
    changes: dict[str, Any] = {}
    for name in ("author", "url", "image_url", "isbn", "asin"):
        value = getattr(body, name)
        if value is not None and value != row[name]:
            changes[name] = value
    metadata = _merged(row["metadata"], body.metadata)
    if metadata is not None:
        changes["metadata"] = metadata
    if not changes:
        return target, Outcome.unchanged
    changes["updated_at"] = clock.now()
    assignments = ", ".join(f"{name} = ?" for name in changes)
    conn.execute(f"UPDATE sources SET {assignments} WHERE id = ?", [*changes.values(), target])
    return target, Outcome.updated


# Metadata an import never overwrites: where an item came from first.
FIRST_IMPORT_KEYS = ("imported_from",)


def _merged(stored: str | None, incoming: dict[str, Any] | None) -> str | None:
    """The stored metadata with the incoming keys added; None when nothing would change.
    `imported_from` stays as the first import set it: the same passage imported from
    Kindle and from Readwise is not "updated" at every switch between the two files."""
    if not incoming:
        return None
    current = json.loads(stored) if stored else {}
    if not isinstance(current, dict):
        current = {}
    kept = {key: current[key] for key in FIRST_IMPORT_KEYS if key in current}
    merged = {**current, **incoming, **kept}
    return None if merged == current else json.dumps(merged)


def _adoptable(
    conn: sqlite3.Connection, item: HighlightItem, source_id: str, run_keys: frozenset[str]
) -> sqlite3.Row | None:
    """The same passage already in this source (imported from another format, or typed in),
    to adopt rather than duplicate: the first with the same text that no other record of this
    run claims (the same words highlighted at two places of one book are two highlights)."""
    own = {item.key, *item.earlier_keys}
    for row in conn.execute(
        "SELECT id FROM highlights WHERE source_id = ? AND content = ? "
        "AND deleted_at IS NULL ORDER BY seq",
        (source_id, item.body.content),
    ).fetchall():
        claimed = conn.execute(
            "SELECT key FROM import_keys WHERE kind = 'highlight' AND target_id = ?",
            (row["id"],),
        )
        if not any(key[0] in run_keys and key[0] not in own for key in claimed):
            return row
    return None


def _write_highlight(
    conn: sqlite3.Connection,
    item: HighlightItem,
    source_id: str,
    index: int,
    run_keys: frozenset[str] = frozenset(),
) -> tuple[Outcome, int | None]:
    body = item.body
    prints = _fingerprints(body)
    target = _lookup(conn, "highlight", [item.key, *item.earlier_keys])
    adopted = False
    if target is None:
        row = _adoptable(conn, item, source_id, run_keys)
        if row is None:
            highlight_id, seq = highlight_store.insert(
                conn, body.model_copy(update={"source_id": source_id}), f"highlights[{index}]."
            )
            _remember(conn, "highlight", item.key, highlight_id, prints)
            return Outcome.created, seq
        target, adopted = str(row["id"]), True
    row = conn.execute("SELECT * FROM highlights WHERE id = ?", (target,)).fetchone()
    if row is None or row["deleted_at"] is not None:
        _remember(conn, "highlight", item.key, target)
        return Outcome.deleted, None
    # Fields whose value in the file is the one this key imported last time: the file did
    # not change them, so the library's value (perhaps the reader's edit) stands. A passage
    # adopted from another format (the same text) only gains what it lacks: two files that
    # disagree on a date or a location would otherwise flip it at each import.
    last = _last_imported(conn, item.key) or {}
    unchanged = frozenset(
        name
        for name, value in prints.items()
        if (row[name] is not None if adopted else last.get(name) == value)
    )
    result = _refresh(conn, row, body, unchanged)
    if result[0] != Outcome.unchanged or not last:
        _remember(conn, "highlight", item.key, target, {**last, **prints})
    else:
        _remember(conn, "highlight", item.key, target)
    return result


def _refresh(
    conn: sqlite3.Connection,
    row: sqlite3.Row,
    body: HighlightCreate,
    unchanged_in_file: frozenset[str] = frozenset(),
) -> tuple[Outcome, int | None]:
    if body.date is not None and row["date"] is not None and body.date < row["date"]:
        return Outcome.unchanged, None  # an older version (an old backup file): keep the newer
    changes: dict[str, Any] = {}
    for name in ("content", "note", "url", "date"):
        value = getattr(body, name)
        if name not in unchanged_in_file and value is not None and value != row[name]:
            changes[name] = value
    if (
        "location" not in unchanged_in_file
        and body.location is not None
        and row["location"] != body.location
    ):
        changes["location"] = body.location
    if body.favorite and not row["favorite"]:
        changes["favorite"] = 1
    metadata = _merged(row["metadata"], body.metadata)
    if metadata is not None:
        changes["metadata"] = metadata
    tags_added = _add_tags(conn, row["id"], body.tags or [])
    if not changes and not tags_added:
        return Outcome.unchanged, None
    changes["updated_at"] = clock.now()
    assignments = ", ".join(f"{name} = ?" for name in changes)
    conn.execute(
        f"UPDATE highlights SET {assignments} WHERE id = ?", [*changes.values(), row["id"]]
    )
    text_changed = "content" in changes or "note" in changes
    return Outcome.updated, row["seq"] if text_changed else None


def _add_tags(conn: sqlite3.Connection, highlight_id: str, names: list[str]) -> bool:
    if not names:
        return False
    tag_ids = tag_store.resolve(conn, names)
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO highlight_tags(highlight_id, tag_id) VALUES (?, ?)",
        [(highlight_id, tag_id) for tag_id in tag_ids],
    )
    return conn.total_changes > before
