"""`import` and `export`: highlights in from Kindle or Readwise, out as Markdown, CSV or JSON."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from screvi_mcp import config
from screvi_mcp.cli.common import (
    INTERRUPTED,
    USAGE_ERROR,
    add_library_option,
    checked_library_path,
)


def _folder_given(kind: str, folder: Path) -> str:
    """What to say when `import` is given a folder: for Kindle, the clippings file in it
    (the device's root or its documents folder), if there is one."""
    if kind == "kindle":
        for candidate in (folder / "documents" / "My Clippings.txt", folder / "My Clippings.txt"):
            if candidate.is_file():
                return f"{folder} is a folder; give the file: {shlex.quote(str(candidate))}"
        return (
            f"{folder} is a folder; give the clippings file (My Clippings.txt, in the "
            "device's documents folder)"
        )
    return f"{folder} is a folder; give the Readwise export file (a .csv)"


def _job_stopped(job: str, failure: Exception, library_path: Path, rerun: str) -> str:
    """What to say of an import or export that stopped: `rerun` (what running it again
    does) after a disk, lock or model failure, but not when the library file itself is
    refused or damaged, which no re-run fixes."""
    import sqlite3

    from screvi_mcp.local.storage.db import damaged

    if isinstance(failure, config.ConfigurationProblem):
        return str(failure)
    if isinstance(failure, sqlite3.DatabaseError) and not isinstance(
        failure, sqlite3.OperationalError
    ):
        return damaged(library_path, failure)
    return f"the {job} stopped: {type(failure).__name__}: {failure}. {rerun}"


def cmd_import(args: argparse.Namespace) -> int:
    """`import kindle|readwise PATH`: parse whole, validate, write in batches, summarise."""
    import sqlite3

    from screvi_mcp.progress import ProgressReporter
    from screvi_mcp.transfer.jobs import import_file
    from screvi_mcp.transfer.records import MalformedFile

    path = Path(args.path).expanduser()
    if path.is_dir():
        print(f"screvi-mcp: {_folder_given(args.format, path)}", file=sys.stderr)
        return 1
    if not path.is_file():
        print(f"screvi-mcp: no file at {path}", file=sys.stderr)
        return 1
    # The same checks as every other command: a folder, a file that is not a library or a
    # folder that does not exist is refused in one line, before anything is created.
    library_path = checked_library_path(args)

    def progress(label: str) -> ProgressReporter:
        return ProgressReporter(label, unit="highlights", enabled=not args.quiet)

    try:
        report = import_file(
            args.format, path, library_path, dry_run=args.dry_run, progress=progress
        )
    except MalformedFile as broken:
        print(
            f"screvi-mcp: cannot import {broken.path}: line {broken.line}: {broken.reason}. "
            "Nothing was imported.",
            file=sys.stderr,
        )
        return 1
    except (OSError, sqlite3.Error, RuntimeError, config.ConfigurationProblem) as failure:
        # Each batch is all-or-nothing, so what was committed is whole, and a re-run skips
        # it by its import keys.
        rerun = "Batches already written are complete; run the same command again to continue."
        print(
            f"screvi-mcp: {_job_stopped('import', failure, library_path, rerun)}", file=sys.stderr
        )
        return 1
    except KeyboardInterrupt:
        print(
            "\nscrevi-mcp: import interrupted. "
            + (
                "Nothing was written (dry run)."
                if args.dry_run
                else "Batches already written are complete (highlights not embedded yet "
                "are embedded by the next command or server that opens the library); run "
                "the same command again to continue."
            ),
            file=sys.stderr,
        )
        return INTERRUPTED
    print(report.summary(f"Imported {path.name} into {library_path}"), file=sys.stderr)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """`export markdown DIR | csv FILE | json FILE` from the library (or the hosted API)."""
    import sqlite3

    from screvi_mcp.progress import ProgressReporter
    from screvi_mcp.transfer.exporters import TargetExists, export_library

    target = Path(args.target).expanduser()
    library_path = checked_library_path(args)
    progress = ProgressReporter("exporting", unit="highlights", enabled=not args.quiet)
    try:
        summary = export_library(
            args.format, target, library_path, progress=progress, force=args.force
        )
    except TargetExists:
        print(
            f"screvi-mcp: {target} already exists; nothing was written. Add --force to "
            "replace it, or give a new file name.",
            file=sys.stderr,
        )
        return USAGE_ERROR
    except (OSError, ValueError) as problem:
        print(f"screvi-mcp: cannot export to {target}: {problem}", file=sys.stderr)
        return 1
    except (sqlite3.Error, config.ConfigurationProblem) as failure:
        rerun = "Files are written whole, so none is half-written; run the same command again."
        print(
            f"screvi-mcp: {_job_stopped('export', failure, library_path, rerun)}", file=sys.stderr
        )
        return 1
    except KeyboardInterrupt:
        print(
            "\nscrevi-mcp: export interrupted. Files are written whole and renamed into "
            "place, so none is half-written; run the same command again.",
            file=sys.stderr,
        )
        return INTERRUPTED
    print(summary, file=sys.stderr)
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    importing = commands.add_parser(
        "import",
        help="import highlights from Kindle's My Clippings.txt or a Readwise CSV export",
        description="Import highlights into the embedded library. Re-running an import adds "
        "no duplicates: items found again are updated. Progress goes to stderr; a summary "
        "ends the run (new/updated/skipped, and each rejected record with its line).",
    )
    formats = importing.add_subparsers(dest="format", metavar="FORMAT", required=True)
    for name, help_text in (
        ("kindle", "a Kindle 'My Clippings.txt' (documents/My Clippings.txt on the device)"),
        ("readwise", "a Readwise export CSV (readwise.io/export, 'Export to CSV')"),
    ):
        parser = formats.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("path", metavar="PATH", help="the file to import")
        add_library_option(parser)
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="show what would be created and updated; write nothing",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress output")
        parser.set_defaults(handler=cmd_import)

    exporting = commands.add_parser(
        "export",
        help="export the library as Markdown notes, a Readwise-style CSV, or API JSON",
        description="Export every live highlight of the embedded library.",
    )
    targets = exporting.add_subparsers(dest="format", metavar="FORMAT", required=True)
    for name, metavar, help_text in (
        (
            "markdown",
            "DIR",
            "one note per source, with front matter and a block id per highlight; "
            "exporting again updates the notes in place",
        ),
        ("csv", "FILE", "the Readwise CSV columns (import it with `import readwise`)"),
        ("json", "FILE", "sources and highlights in the API's own shapes"),
    ):
        parser = targets.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("target", metavar=metavar, help="where to write")
        add_library_option(parser)
        parser.add_argument("--quiet", action="store_true", help="no progress output")
        # Markdown needs no --force: it rewrites only notes it wrote, never another file.
        parser.set_defaults(handler=cmd_export, force=False)
        if name != "markdown":
            parser.add_argument(
                "--force", action="store_true", help="replace FILE if it exists already"
            )
