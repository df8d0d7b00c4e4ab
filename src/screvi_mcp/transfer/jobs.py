"""Import and export as whole jobs: open the library, read the file, run, report.

The CLI calls these; tests and the benchmark call them too, so a job does the same thing
from every entry point.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from screvi_mcp.local.storage.library import Library
from screvi_mcp.progress import ProgressReporter, heartbeat
from screvi_mcp.transfer import kindle, readwise
from screvi_mcp.transfer.importer import ImportReport, run_import
from screvi_mcp.transfer.records import MalformedFile, ParsedFile

# A clippings file of 100,000 highlights is about 40 MB; beyond this bound the file is
# refused before it is read rather than filling memory (stated in the README's table of bounds).
MAX_IMPORT_BYTES = 256 * 1024 * 1024

PARSERS: dict[str, Callable[[str, bytes], ParsedFile]] = {
    "kindle": kindle.parse,
    "readwise": readwise.parse,
}


def read_file(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_IMPORT_BYTES:
        raise MalformedFile(
            str(path), 1, f"the file is {size:,} bytes; imports read at most {MAX_IMPORT_BYTES:,}"
        )
    return path.read_bytes()


def parse_file(kind: str, path: Path) -> ParsedFile:
    """Parse a whole file; raises `MalformedFile` (with the line) when it cannot be read."""
    return PARSERS[kind](str(path), read_file(path))


@contextlib.contextmanager
def _library_for(library_path: Path, *, dry_run: bool) -> Iterator[Library]:
    """The library to import into; a dry run against a library that does not exist yet runs
    on a throwaway copy so that not even an empty file is left behind."""
    if dry_run and not library_path.exists():
        folder = tempfile.mkdtemp(prefix="screvi-dry-run-")
        library = Library.open(Path(folder) / "library.db")
        try:
            yield library
        finally:
            library.close()
            shutil.rmtree(folder, ignore_errors=True)
        return
    library = Library.open(library_path)
    try:
        yield library
    finally:
        from screvi_mcp.local.search.attach import detach_semantic_index

        detach_semantic_index(library)
        library.close()


def _stage(reporter: ProgressReporter | None, action: Callable[[], object]) -> None:
    """Run one embedding stage, its reporter's line ended however it ends."""
    try:
        action()
    except BaseException:
        if reporter is not None and reporter.total:
            reporter.finish(stopped=True)
        raise
    if reporter is not None and reporter.total:
        reporter.finish()


def _parse_telling(
    kind: str, path: Path, progress: Callable[[str], ProgressReporter] | None
) -> ParsedFile:
    """Parse the file, saying so from the first second: a large one takes a while."""
    if progress is None:
        return parse_file(kind, path)
    megabytes = path.stat().st_size / 1_000_000
    with heartbeat(progress("reading"), f"{path.name} ({megabytes:,.1f} MB)") as reading:
        parsed = parse_file(kind, path)
        reading.update(len(parsed.records))
    return parsed


def import_file(
    kind: str,
    path: Path,
    library_path: Path,
    *,
    dry_run: bool = False,
    progress: Callable[[str], ProgressReporter] | None = None,
    embed: bool = True,
) -> ImportReport:
    """Import a Kindle or Readwise file into the library at `library_path`.

    With `embed` (the default) the semantic index is attached first, so each batch is
    embedded as it is written; without the `local` extra, search stays keyword-only.
    `progress` makes a reporter, given its label, once each stage starts ("importing",
    then "embedding" for what the background worker has not embedded by the last batch),
    so that its clock (rate, ETA) leaves out opening the library and loading the model.
    """
    parsed = _parse_telling(kind, path, progress)
    with _library_for(library_path, dry_run=dry_run) as library:
        if embed and not dry_run:
            from screvi_mcp.local.search.attach import attach_semantic_index

            attach_semantic_index(library, backfill="never")
        reporter = progress("importing") if progress is not None else None
        # The reporter's own exit ends its line: "stopped after" on Ctrl-C or a failure.
        with reporter or contextlib.nullcontext():
            report = run_import(library, parsed, dry_run=dry_run, progress=reporter)
        if embed and not dry_run:
            # Writes answer at commit and are embedded by a background queue; a one-shot
            # import leaves nothing for a server that may not be running.
            from screvi_mcp.local.search import interim
            from screvi_mcp.local.search.attach import embed_waiting_highlights

            if interim.index_for(library) is not None:  # a fast model first, then the English
                fast = progress("embedding, fast model") if progress is not None else None
                _stage(fast, lambda: interim.drain(library, fast))
            embedding = progress("embedding") if progress is not None else None
            _stage(embedding, lambda: embed_waiting_highlights(library, embedding))
        return report
