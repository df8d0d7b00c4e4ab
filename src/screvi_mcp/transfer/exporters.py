"""Export: the library's live highlights as Markdown notes, a Readwise-style CSV, or JSON.

Everything is read through the API client (the API's own shapes, the wire models), so an
export sees exactly what an agent sees: live highlights only, with their tags and metadata.

- `markdown DIR`: one note per source. Each note has YAML front matter (title, author, type,
  tags, source_id, library_id) and the highlights inside a generated region, each ending with
  a stable Obsidian block id `^h-<highlight id>`. Exporting again rewrites the front matter
  and the region in place (a note is found by its `source_id`, even if renamed), keeps
  anything the reader wrote outside the region, drops highlights deleted since, and removes
  notes of sources that have no live highlight left (unless the reader wrote in them).
  Only this library's notes are touched: `library_id` is the library's own id (a setting made
  on first export), and a note of another library is never rewritten or removed. A note an
  earlier version wrote (no `library_id`) is this library's only when its `source_id` is a
  source this library holds or held (ids are random UUIDs); any other is left alone.
- `csv FILE`: Readwise's export columns, so `import readwise` reads it back (round trip),
  then columns of ours Readwise ignores: the source type, and the tag names as JSON lists (a
  name may hold a comma), which Readwise's CSV cannot carry.
- `json FILE`: `{exported_at, sources: [Source], highlights: [Highlight], review_cards}`.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

import anyio

from screvi_mcp import contract
from screvi_mcp.embedded import embedded_client
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import sources as source_store
from screvi_mcp.models import Highlight, Source
from screvi_mcp.progress import ProgressReporter
from screvi_mcp.transfer import markdown_notes
from screvi_mcp.transfer.markdown_notes import (
    STANDALONE_ID,
    ExistingNote,
    existing_notes,
    free_name,
    note_text,
)
from screvi_mcp.transfer.readwise import (
    COLUMNS,
    DOCUMENT_TAGS_COLUMN,
    EXTRA_COLUMNS,
    FAVORITE_TAG,
    SOURCE_TYPE_COLUMN,
    TAGS_COLUMN,
    neutralise,
)

PAGE_SIZE = contract.MAX_PER_PAGE  # the largest page: fewest requests
# The in-process library serves the export: its per-key request limit is for agents, and
# would only slow a 20,000-highlight export down to 100 pages a minute.
EXPORT_RATE_LIMIT = 1_000_000
# The library's own id, written in each note's front matter: which notes it may rewrite or
# remove. Made on first export; kept in the library's settings.
LIBRARY_ID_SETTING = "library_id"


@dataclass
class LibraryDump:
    sources: list[Source]
    highlights: list[Highlight]

    def by_source(self) -> dict[str, list[Highlight]]:
        grouped: dict[str, list[Highlight]] = {}
        for highlight in self.highlights:
            key = highlight.source.id if highlight.source is not None else STANDALONE_ID
            grouped.setdefault(key, []).append(highlight)
        for items in grouped.values():
            items.sort(key=lambda h: (h.location is None, h.location or 0, str(h.created_at), h.id))
        return grouped


async def read_library(library_path: Path, progress: ProgressReporter | None = None) -> LibraryDump:
    highlights: list[Highlight] = []
    client = await embedded_client(  # reads only: no search model, no article fetching
        library_path, server_rate_limit_per_minute=EXPORT_RATE_LIMIT, background_work=False
    )
    async with client:  # the client owns the transport: closing it ends the app
        sources = [
            source
            async for source in client.iterate(
                client.list_sources, include_metadata=True, per_page=PAGE_SIZE, max_items=None
            )
        ]
        page = 1
        while True:
            result = await client.list_highlights(
                page=page, per_page=PAGE_SIZE, include_metadata=True
            )
            highlights.extend(result.data)
            if progress is not None:
                progress.update(len(highlights), result.pagination.total)
            if not result.data or not result.pagination.has_more:
                break
            page += 1
    unique = {highlight.id: highlight for highlight in highlights}
    return LibraryDump(sources, list(unique.values()))


# -- CSV ------------------------------------------------------------------------------------

_LOCATION_TYPE_BY_SOURCE = {
    "book": "location",
    "pdf": "page",
    "article": "offset",
    "podcast": "time_offset",
    "tweet": "order",
}


def csv_row(highlight: Highlight, source: Source | None) -> dict[str, str]:
    metadata = highlight.metadata or {}
    source_type = highlight.source.type if highlight.source else ""
    location = "" if highlight.location is None else _number(highlight.location)
    if not location and isinstance(metadata.get("location"), str):
        location = metadata["location"]
    location_type = str(metadata.get("location_type") or "")
    if not location_type and location:
        location_type = _LOCATION_TYPE_BY_SOURCE.get(source_type, "location")
    if not location_type and source_type in ("article", "podcast"):
        location_type = _LOCATION_TYPE_BY_SOURCE[source_type]
    date = ""
    if highlight.date is not None:
        # Readwise's form; the fraction of a second only when there is one.
        date = highlight.date.astimezone(UTC).isoformat(sep=" ")
    document_tags = [tag.name for tag in source.tags] if source else []
    return {
        "Highlight": highlight.content,
        "Book Title": highlight.source.name if highlight.source else "",
        "Book Author": (highlight.source.author or "") if highlight.source else "",
        "Amazon Book ID": str(metadata.get("asin") or ""),
        "Note": highlight.note or "",
        "Color": str(metadata.get("color") or ""),
        "Tags": ", ".join(
            [tag.name for tag in highlight.tags] + ([FAVORITE_TAG] if highlight.favorite else [])
        ),
        "Location Type": location_type,
        "Location": location,
        "Highlighted at": date,
        "Document tags": ", ".join(document_tags),
        SOURCE_TYPE_COLUMN: source_type,
        TAGS_COLUMN: json.dumps([tag.name for tag in highlight.tags], ensure_ascii=False),
        DOCUMENT_TAGS_COLUMN: json.dumps(document_tags, ensure_ascii=False),
    }


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def write_csv(dump: LibraryDump, target: Path, *, replace: bool = False) -> int:
    sources = {source.id: source for source in dump.sources}
    rows = []
    for items in dump.by_source().values():
        for highlight in items:
            source = sources.get(highlight.source.id) if highlight.source else None
            row = csv_row(highlight, source)
            rows.append({name: neutralise(value) for name, value in row.items()})

    def write(handle: Any) -> None:
        writer = csv.DictWriter(handle, fieldnames=[*COLUMNS, *EXTRA_COLUMNS], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)

    _atomic_write(target, write, replace=replace)
    return len(rows)


# -- JSON -----------------------------------------------------------------------------------


def write_json(
    dump: LibraryDump, target: Path, review: list[dict[str, object]], *, replace: bool = False
) -> int:
    document = {
        "exported_at": clock.now(),
        "sources": [source.model_dump(mode="json") for source in dump.sources],
        "highlights": [highlight.model_dump(mode="json") for highlight in dump.highlights],
        # The daily review's schedule (review/state.py): the one format that can carry it.
        "review_cards": review,
    }
    _atomic_write(
        target,
        lambda handle: json.dump(document, handle, ensure_ascii=False, indent=2),
        replace=replace,
    )
    return len(dump.highlights)


class TargetExists(Exception):
    """The file an export would write is there already, and replacing it was not asked for:
    it may be anything of the reader's, so it is never replaced unasked."""

    def __init__(self, target: Path) -> None:
        super().__init__(f"{target} already exists")
        self.target = target


def _atomic_write(target: Path, write: Callable[[Any], None], *, replace: bool) -> None:
    """Write beside the target and rename: an interrupted export never leaves half a file.
    Without `replace`, a file at `target` (even one that appeared during the export) stays."""
    staged = _stage(target, write)
    if replace:
        os.replace(staged, target)
        return
    try:
        os.link(staged, target)  # fails on any existing name: no window between check and write
    except FileExistsError:
        raise TargetExists(target) from None
    except OSError:  # a file system without hard links: check, then rename
        if os.path.lexists(target):
            raise TargetExists(target) from None
        os.replace(staged, target)
    finally:
        Path(staged).unlink(missing_ok=True)


def _stage(target: Path, write: Callable[[Any], None]) -> str:
    """A temporary file beside `target` holding what `write` wrote; its name is short (a
    name near the file system's limit cannot take a prefix and a random tail)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".screvi-export-", dir=target.parent)
    try:
        # mkstemp makes the file 0600; the export gets what the file it replaces had, or
        # what a new file gets under the umask.
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        os.chmod(temporary, mode)
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            write(stream)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


# -- Markdown -------------------------------------------------------------------------------


def write_markdown(
    dump: LibraryDump,
    folder: Path,
    library_id: str,
    held_sources: set[str] | None = None,
) -> tuple[int, int, int, list[str]]:
    """Write the notes; returns (notes written, notes removed, highlights, names of `*.md`
    entries passed over: not regular files, or too large to read).

    `held_sources`: the ids, among those of notes without a library id, of sources this
    library holds or held (deleted ones too): which of those old notes are its own.
    Every note is first written to a temporary file beside it; only when all are written are
    they renamed into place (so a full disk changes nothing), then the removed ones go.
    """
    folder.mkdir(parents=True, exist_ok=True)
    sources = {source.id: source for source in dump.sources}
    in_folder = existing_notes(folder)
    existing = _own_notes(in_folder.notes, library_id, held_sources or set())
    used = {markdown_notes.name_key(path.name) for path in folder.glob("*.md")}
    limit = markdown_notes.name_limit(folder)
    changes: list[tuple[Path, str]] = []
    written = count = 0
    for source_id, highlights in dump.by_source().items():
        source = sources.get(source_id)
        if source is None and source_id != STANDALONE_ID and highlights[0].source is not None:
            embedded = highlights[0].source
            source = Source(
                id=embedded.id, name=embedded.name, type=embedded.type, author=embedded.author
            )
        note = existing.get(source_id)
        previous = note.text if note is not None else None
        path = note.path if note is not None else None
        if path is None:
            title = source.name if source else markdown_notes.STANDALONE_TITLE
            path = folder / free_name(markdown_notes.slug(title, limit), source_id, used)
        text = note_text(source, highlights, previous, library_id)
        if text != previous:
            changes.append((path, text))
        written += 1
        count += len(highlights)
    live = set(dump.by_source())
    removals = []
    for source_id, note in existing.items():
        if source_id in live:
            continue
        if markdown_notes.reader_wrote(note.text):
            kept = note_text(sources.get(source_id), [], note.text, library_id)
            changes.append((note.path, kept))
        else:
            removals.append(note.path)
    _write_all(changes)
    for path in removals:
        path.unlink(missing_ok=True)
    return written, len(removals), count, in_folder.passed_over


def _writer(text: str) -> Callable[[Any], None]:
    def write(handle: Any) -> None:
        handle.write(text)

    return write


def _write_all(changes: list[tuple[Path, str]]) -> None:
    """Stage every note, then rename them all into place; a failure says what is in place."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in changes:
            staged.append((_stage(path, _writer(text)), path))
    except BaseException:
        for temporary, _ in staged:
            Path(temporary).unlink(missing_ok=True)
        raise
    done: list[str] = []
    try:
        for temporary, path in staged:
            os.replace(temporary, path)
            done.append(path.name)
    except OSError as error:
        for temporary, _ in staged[len(done) :]:
            Path(temporary).unlink(missing_ok=True)
        shown = ", ".join(done[:10]) + (f" and {len(done) - 10} more" if len(done) > 10 else "")
        raise OSError(
            error.errno,
            f"{error.strerror}; wrote {len(done)} of {len(staged)} notes"
            + (f" ({shown})" if done else "")
            + "; run the export again to write the rest",
        ) from error


def _own_notes(
    notes: Iterable[ExistingNote], library_id: str, held_sources: set[str]
) -> dict[str, ExistingNote]:
    """This library's notes by source id: those it wrote, and those an earlier version wrote
    (no library id) for a source this library holds or held. Every other note — another
    library's, or an old one for a source unknown here — is never rewritten or removed."""
    own: dict[str, ExistingNote] = {}
    for note in notes:
        if note.library_id == library_id or (
            note.library_id is None and note.source_id in held_sources
        ):
            own[note.source_id] = note
    return own


def library_identity(library_path: Path, note_sources: Iterable[str] = ()) -> tuple[str, set[str]]:
    """The library's id (made and stored on first use), and which of `note_sources` are
    sources it holds or held (a deleted source keeps its row)."""
    library = Library.open(library_path)
    try:
        identity = library.setting_once(LIBRARY_ID_SETTING, lambda: str(uuid.uuid4()))
        return identity, source_store.known_ids(library, note_sources)
    finally:
        library.close()


# -- the job --------------------------------------------------------------------------------


def review_cards(library_path: Path) -> list[dict[str, object]]:
    from screvi_mcp.review.state import ReviewState

    with ReviewState.open(library_path) as state:
        return state.exported_cards()


def _check_writable(folder: Path) -> None:
    """The export can write in `folder` (made if missing): said before the library is read,
    in words, rather than as an errno naming a temporary file after the work."""
    ancestor = folder
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(f"{ancestor} is a file, not a folder; choose another place to export to")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".screvi-export-", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise ValueError(
            f"cannot write in {folder}: {error.strerror or error}; choose a folder you can write to"
        ) from error


def export_library(
    kind: str,
    target: Path,
    library_path: Path,
    *,
    progress: ProgressReporter | None = None,
    force: bool = False,
) -> str:
    """Run an export; returns the summary text. A CSV or JSON export onto an existing file
    raises `TargetExists` (before any work) unless `force`; a Markdown export updates only
    the notes it wrote and never needs it."""
    if kind not in ("markdown", "csv", "json"):
        raise ValueError(f"unknown export format {kind!r}; choose markdown, csv or json")
    if kind == "markdown" and target.exists() and not target.is_dir():
        raise ValueError("markdown export writes a folder of notes; give a directory")
    if kind != "markdown" and target.is_dir():
        raise ValueError(f"{kind} export writes one file; give a file name, not a directory")
    if kind != "markdown" and not force and os.path.lexists(target):
        raise TargetExists(target)
    if not library_path.exists():
        raise ValueError(f"no library at {library_path} (give it with --library PATH)")
    _check_writable(target if kind == "markdown" else target.parent)
    library_id, held = "", set[str]()
    if kind == "markdown":
        # Which library this is, and which notes of earlier versions are its own: before
        # reading, so that a library that cannot be opened fails before any work.
        old_notes = [n.source_id for n in existing_notes(target).notes if n.library_id is None]
        library_id, held = library_identity(library_path, old_notes)
    # The reporter's own exit ends its line: "stopped after" on Ctrl-C or a failure.
    with progress or contextlib.nullcontext():
        dump = anyio.run(read_library, library_path, progress)
    if kind == "csv":
        rows = write_csv(dump, target, replace=force)
        return f"Exported {rows} highlights to {target} (Readwise CSV columns)"
    if kind == "json":
        count = write_json(dump, target, review_cards(library_path), replace=force)
        return f"Exported {len(dump.sources)} sources and {count} highlights to {target}"
    written, removed, count, passed_over = write_markdown(dump, target, library_id, held)
    summary = f"Exported {count} highlights as {written} notes to {target}"
    if removed:
        summary += f"; removed {removed} notes of sources with no highlights left"
    if passed_over:
        limit = markdown_notes.MAX_NOTE_BYTES // (1024 * 1024)
        shown = ", ".join(passed_over[:5]) + ("…" if len(passed_over) > 5 else "")
        summary += (
            f"; left alone {len(passed_over)} *.md entries that are not regular files or are "
            f"over {limit} MiB: {shown}"
        )
    return summary
