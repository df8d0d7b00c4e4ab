"""The same passage imported from Kindle and from Readwise is one highlight, and switching
between the two files does not flip it back and forth: once the text is the same, its
`updated_at` and `imported_from` stay as the first import left them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from screvi_mcp.local.storage.store.imports import Outcome
from screvi_mcp.transfer import jobs

PASSAGE = "The sea keeps its own calendar, and the keeper learns to read it."
KINDLE = (
    "The Lighthouse Keeper's Almanac (Mara Wren)\n"
    "- Your Highlight on page 12 | location 180-182 | Added on Monday, 3 March 2024 10:15:02\n"
    "\n"
    f"{PASSAGE}\n"
    "==========\n"
)
READWISE = (
    "Highlight,Book Title,Book Author,Amazon Book ID,Note,Color,Tags,Location Type,Location,"
    "Highlighted at,Document tags\n"
    f'"{PASSAGE}",The Lighthouse Keeper\'s Almanac,Mara Wren,,,yellow,,location,181,'
    "2024-03-04 08:00:00+00:00,\n"
)


def stored(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT updated_at, metadata, date FROM highlights").fetchall()
    finally:
        conn.close()
    return [
        (updated, json.loads(metadata)["imported_from"], date) for updated, metadata, date in rows
    ]


def test_switching_between_kindle_and_readwise_files_changes_nothing(tmp_path: Path) -> None:
    kindle, readwise = tmp_path / "My Clippings.txt", tmp_path / "readwise.csv"
    kindle.write_text(KINDLE, encoding="utf-8")
    readwise.write_text(READWISE, encoding="utf-8")
    library = tmp_path / "library.sqlite3"

    first = jobs.import_file("kindle", kindle, library, embed=False)
    assert first.new_highlights == 1
    jobs.import_file("readwise", readwise, library, embed=False)  # the same passage: adopted
    settled = stored(library)
    assert len(settled) == 1
    assert settled[0][1] == "kindle"  # where it came from first
    for kind, path in [("kindle", kindle), ("readwise", readwise)] * 2:
        again = jobs.import_file(kind, path, library, embed=False)
        assert again.highlights[Outcome.updated] == 0, (kind, again.summary(kind))
        assert stored(library) == settled, kind
