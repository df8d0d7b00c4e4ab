"""Readwise export CSV parsing: columns, multi-line quoted fields, types, tags, colours."""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp.transfer import readwise
from screvi_mcp.transfer.records import MalformedFile

FIXTURES = Path(__file__).parent / "fixtures"
HEADER = ",".join(readwise.COLUMNS)


def test_the_export_fixture() -> None:
    parsed = readwise.parse("export.csv", (FIXTURES / "readwise_export.csv").read_bytes())
    records = {r.highlight["content"]: r for r in parsed.records}
    keeper = records['The keeper writes the weather down,\nline by line, "before breakfast".']
    assert keeper.line == 2
    assert keeper.source == {
        "name": "The Lighthouse Keeper's Almanac",
        "type": "book",
        "author": "Mara Wren",
        "asin": "B0TESTASIN1",
    }
    assert keeper.highlight["note"] == "A note\nover two lines"  # quoted, CRLF inside
    assert keeper.highlight["tags"] == ["sea", "routine", "favourites"]  # + document tags
    assert keeper.highlight["metadata"]["color"] == "yellow"
    assert keeper.highlight["location"] == 180
    assert keeper.highlight["date"] == "2024-03-03T10:15:02.000000Z"
    types = {r.source["name"]: r.source["type"] for r in parsed.records}
    assert types == {
        "The Lighthouse Keeper's Almanac": "book",
        "Tweets From Ada Quill": "tweet",
        "The Quiet Hour Podcast": "podcast",
        "Notes on Caching": "article",
        "Field Notes on Quiet Machines": "book",
    }
    # The row after the two-line record starts on line 5: line numbers count file lines.
    tweet = records["Small tools outlive grand plans."]
    assert tweet.line == 5
    # Readwise's "favorite" tag is the library's favourite flag, not a tag.
    assert tweet.highlight["favorite"] is True and "tags" not in tweet.highlight
    assert records["Caches are promises about the future."].highlight["tags"] == [
        "engineering",
        "web",
    ]
    assert [(n.line, n.reason) for n in parsed.rejected] == [(9, "empty Highlight")]


def test_only_highlight_and_title_are_required_and_columns_may_be_reordered() -> None:
    raw = b"Book Title,Highlight\nA Book,Some text\n"
    [record] = readwise.parse("short.csv", raw).records
    assert record.source == {"name": "A Book", "type": "book"}
    assert record.highlight == {"content": "Some text", "metadata": {"imported_from": "readwise"}}


def test_a_spreadsheet_that_saved_it_with_semicolons_or_tabs() -> None:
    for delimiter in (";", "\t"):
        raw = f"Highlight{delimiter}Book Title\nOne, two{delimiter}A Book\n"
        [record] = readwise.parse("semi.csv", raw.encode()).records
        assert record.highlight["content"] == "One, two" and record.source["name"] == "A Book"


def test_dates_a_spreadsheet_rewrote_are_still_read() -> None:
    raw = 'Highlight,Book Title,Highlighted at\nText,Book,"March 3, 2024 10:15 PM"\n'
    [record] = readwise.parse("dates.csv", raw.encode()).records
    assert record.highlight["date"] == "2024-03-03T22:15:00Z"


def test_same_row_gives_the_same_key_and_a_different_text_another() -> None:
    row = f"{HEADER}\nText one,Book,A,,,,,location,10,,\nText two,Book,A,,,,,location,10,,\n"
    first, second = readwise.parse("a.csv", row.encode()).records
    again = readwise.parse("a.csv", row.encode()).records[0]
    assert first.key == again.key and first.key != second.key
    assert first.source_key == second.source_key


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("Title,Author\nx,y\n", 1, "missing column(s) Highlight, Book Title"),
        (f'{HEADER}\nfine,Book,,,,,,,,,\n"never closed,Book,,,,,,,,,\n', 3, "broken CSV"),
        (f"{HEADER}\nfine,Book,,,,,,,,,\ntoo,many,fields,,,,,,,,,,,\n", 3, "14 fields"),
        (f'{HEADER}\n"two\nlines",Book,,,,,,,,,\nshort,row\n', 4, "2 fields"),
    ],
)
def test_a_broken_csv_is_reported_at_the_line_where_it_broke(
    text: str, line: int, words: str
) -> None:
    with pytest.raises(MalformedFile) as broken:
        readwise.parse("broken.csv", text.encode())
    assert broken.value.line == line
    assert words in broken.value.reason
