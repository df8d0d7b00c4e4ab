"""Imports keep the keyword index in step: new passages, and tags added to a passage already
there (keyword rows are written once per transaction, migration 0013)."""

from __future__ import annotations

from pathlib import Path

from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.keyword import keyword_ranking
from screvi_mcp.local.storage.library import Library
from screvi_mcp.transfer import jobs

FIXTURES = Path(__file__).parent / "fixtures"
ROW = "content, note, source_name, source_author, tags"


def test_imported_passages_and_their_later_tags_are_found_by_keyword(tmp_path: Path) -> None:
    library_path = tmp_path / "library.sqlite"
    jobs.import_file("kindle", FIXTURES / "clippings_en.txt", library_path, embed=False)
    csv_file = tmp_path / "r.csv"
    # The same passage as the Kindle file's, now with a tag: the import adds it in place.
    csv_file.write_text(
        "Highlight,Book Title,Book Author,Tags,Location Type,Location\n"
        '"The sea keeps its own calendar, and the keeper learns to read it.",'
        'The Lighthouse Keeper\'s Almanac (Second Edition),"Wren, Mara",tidewatch,location,180\n',
        encoding="utf-8",
    )
    jobs.import_file("readwise", csv_file, library_path, embed=False)
    library = Library.open(library_path)
    try:
        conn = library.connection()
        index = conn.execute(f"SELECT rowid, {ROW} FROM highlights_fts ORDER BY rowid").fetchall()
        rows = conn.execute(f"SELECT seq, {ROW} FROM highlights_fts_rows ORDER BY seq").fetchall()
        assert [tuple(row) for row in index] == [tuple(row) for row in rows]
        assert len(rows) >= 5
        [tagged] = keyword_ranking(conn, "tidewatch", Filters(), 10)
        assert tagged in keyword_ranking(conn, "calendar keeper", Filters(), 10)
        assert len(keyword_ranking(conn, "wren", Filters(), 10)) >= 2  # the author, per passage
    finally:
        library.close()
