"""Readwise's export CSV (and the CSV `export csv` writes, which uses the same columns).

Columns: Highlight, Book Title, Book Author, Amazon Book ID, Note, Color, Tags, Location Type,
Location, Highlighted at, Document tags. Fields may be quoted and span lines. Only Highlight
and Book Title are required; the others are read when present.

Readwise has no column for the kind of document, so the source type is told from the data:
a tweet author (`@name`) or a "Tweets From" title is a tweet, a time location a podcast, a
web offset an article, a book with an Amazon id or a page/location a book.

`export csv` adds columns of its own after Readwise's (Readwise ignores columns it does not
know, and a real Readwise export has none of them): `Screvi Source Type`, the source's type,
and `Screvi Tags` / `Screvi Document Tags`, the tag names as a JSON list (Readwise's Tags
column is comma-separated, which splits a name holding a comma). When present they are read
instead of guessing the type and splitting the tag columns.

Formulas (CWE-1236): a spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a
carriage return as a formula (`=HYPERLINK(...)` leaks data on a click). `export csv` puts an
apostrophe before such a cell, and before a cell that is apostrophes followed by one of them,
so the change can be undone exactly; reading a file that has our columns undoes it. A real
Readwise export (none of our columns) is read as it is.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from typing import Any, get_args

from screvi_mcp.contract import SourceTypeName
from screvi_mcp.local.storage import clock
from screvi_mcp.transfer.kindle import parse_date
from screvi_mcp.transfer.records import (
    EMPTY_FILE,
    ImportRecord,
    MalformedFile,
    Notice,
    ParsedFile,
    decode_text,
)

COLUMNS: tuple[str, ...] = (
    "Highlight",
    "Book Title",
    "Book Author",
    "Amazon Book ID",
    "Note",
    "Color",
    "Tags",
    "Location Type",
    "Location",
    "Highlighted at",
    "Document tags",
)
# Written by `export csv` after Readwise's own columns; read when present.
SOURCE_TYPE_COLUMN = "Screvi Source Type"
TAGS_COLUMN = "Screvi Tags"
DOCUMENT_TAGS_COLUMN = "Screvi Document Tags"
EXTRA_COLUMNS: tuple[str, ...] = (SOURCE_TYPE_COLUMN, TAGS_COLUMN, DOCUMENT_TAGS_COLUMN)
# Source types the type column may give: the API's enum, with the legacy `youtube` read as
# `video`.
KNOWN_SOURCE_TYPES = tuple(name for name in get_args(SourceTypeName) if name != "youtube")
LEGACY_SOURCE_TYPES = {"youtube": "video"}
REQUIRED = ("Highlight", "Book Title")
# A cell a spreadsheet would run, once neutralised: apostrophes, then a formula character.
_NEUTRALISED = re.compile(r"\A'+[=+\-@\t\r]")
_NEEDS_NEUTRALISING = re.compile(r"\A'*[=+\-@\t\r]")


def neutralise(cell: str) -> str:
    """A cell no spreadsheet runs as a formula; `restore` gives it back exactly."""
    return "'" + cell if _NEEDS_NEUTRALISING.match(cell) else cell


def restore(cell: str) -> str:
    return cell[1:] if _NEUTRALISED.match(cell) else cell


FAVORITE_TAG = "favorite"
# More tags than this on one highlight is a broken file, not a reader's tagging: the record is
# refused before its tags are compared or stored.
MAX_IMPORT_TAGS = 100
# Location Type values, as Readwise writes them, mapped to what they tell about the source.
TIME_LOCATIONS = ("time", "time_offset", "timestamp")
WEB_LOCATIONS = ("offset",)
BOOK_LOCATIONS = ("location", "page")


def source_type(row: dict[str, str]) -> str:
    author = row.get("Book Author", "").strip()
    title = row.get("Book Title", "").strip()
    location_type = row.get("Location Type", "").strip().lower()
    if author.startswith("@") or title.lower().startswith("tweets from"):
        return "tweet"
    if location_type in TIME_LOCATIONS or "podcast" in title.lower():
        return "podcast"
    if location_type in WEB_LOCATIONS:
        return "article"
    return "book"


def split_tags(text: str) -> list[str]:
    """Readwise writes tags comma-separated; names keep their inner spaces."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _tag_list(
    row: dict[str, str], json_column: str, readwise_column: str, line: int, parsed: ParsedFile
) -> list[str]:
    """The tag names of a row: from our JSON column when the file has one and it holds a
    list of names, else Readwise's comma-separated column."""
    text = row.get(json_column, "").strip()
    if text:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, list) and all(isinstance(name, str) for name in value):
            return [name.strip() for name in value if name.strip()]
        parsed.notices.append(
            Notice(
                line,
                f"{json_column} is not a JSON list of names ({_shown(text)}); "
                f"read {readwise_column} instead",
            )
        )
    return split_tags(row.get(readwise_column, ""))


def _shown(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _source_type(row: dict[str, str], line: int, parsed: ParsedFile) -> str:
    """The type our column gives, else the one the data suggests (`source_type`)."""
    given = row.get(SOURCE_TYPE_COLUMN, "").strip().lower()
    given = LEGACY_SOURCE_TYPES.get(given, given)
    if given in KNOWN_SOURCE_TYPES:
        return given
    guessed = source_type(row)
    if given:
        parsed.notices.append(
            Notice(
                line,
                f"{SOURCE_TYPE_COLUMN} {_shown(given)} is not a source type; imported as {guessed}",
            )
        )
    return guessed


def source_key(title: str, author: str, kind: str) -> str:
    prefix = "book" if kind == "book" else kind
    return f"{prefix}:" + " ".join(f"{title}|{author}".casefold().split())


def _date(text: str) -> str | None:
    value = text.strip()
    if not value:
        return None
    try:
        return clock.normalise_timestamp(value.replace(" ", "T", 1) if "T" not in value else value)
    except (ValueError, OverflowError):
        # Not ISO 8601 (a spreadsheet re-saved it?): "March 3, 2024 10:15 AM" and the like.
        return parse_date(value)


def _location(text: str) -> int | None:
    value = text.strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if number >= 0 and number == number else None


def parse(path: str, raw: bytes) -> ParsedFile:
    """Parse a whole CSV into import records (nothing is written here)."""
    text = decode_text(path, raw)
    first_line = text.split("\n", 1)[0]
    # A spreadsheet re-saving the file may change the delimiter (';' in many locales).
    delimiter = max((",", ";", "\t"), key=first_line.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    parsed = ParsedFile()
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise MalformedFile(path, 1, f"unreadable header: {error}") from None
    if header is None or not any(name.strip() for name in header):
        parsed.warnings.append(EMPTY_FILE)
        return parsed
    names = [name.strip() for name in header]
    missing = [name for name in REQUIRED if name not in names]
    if missing:
        raise MalformedFile(
            path,
            1,
            f"missing column(s) {', '.join(missing)}; a Readwise export starts with the header "
            + ",".join(COLUMNS),
        )
    line = reader.line_num
    rows = 0
    ours = any(name in names for name in EXTRA_COLUMNS)
    while True:
        start = line + 1
        try:
            values = next(reader, None)
        except csv.Error as error:
            raise MalformedFile(path, start, f"broken CSV record: {error}") from None
        if values is None:
            break
        line = reader.line_num
        if not values or all(not value.strip() for value in values):
            continue
        if len(values) != len(names):
            raise MalformedFile(
                path,
                start,
                f"the record has {len(values)} fields but the header has {len(names)} "
                "(a stray quote or comma?)",
            )
        # Quoted fields keep the file's line ends; the library stores plain "\n".
        if ours:
            values = [restore(value) for value in values]
        fields = [value.replace("\r\n", "\n").replace("\r", "\n") for value in values]
        record = _record(start, dict(zip(names, fields, strict=True)), parsed)
        if record is not None:
            parsed.records.append(record)
        rows += 1
    if not rows:
        parsed.warnings.append(
            "the file has a header row but no highlights: there was nothing to import"
        )
    return parsed


def _tags_of(row: dict[str, str], line: int, parsed: ParsedFile) -> tuple[list[str], bool] | None:
    """A row's tags (Tags, then Document tags, each once) and whether it is a favourite;
    None when it has more tags than a real reader's (the row is rejected)."""
    tags = _tag_list(row, TAGS_COLUMN, "Tags", line, parsed)
    if any(name.casefold() == FAVORITE_TAG for name in split_tags(row.get("Tags", ""))):
        tags.append(FAVORITE_TAG)  # our Tags JSON holds tag names; Tags says favourite
    held = {tag.casefold() for tag in tags}
    for name in _tag_list(row, DOCUMENT_TAGS_COLUMN, "Document tags", line, parsed):
        if name.casefold() not in held:
            held.add(name.casefold())
            tags.append(name)
    if len(held) > MAX_IMPORT_TAGS:
        parsed.rejected.append(
            Notice(line, f"{len(held)} tags; at most {MAX_IMPORT_TAGS} are imported per highlight")
        )
        return None
    # Readwise marks favourites with a tag; the library has a field for it.
    favorite = any(tag.casefold() == FAVORITE_TAG for tag in tags)
    return [tag for tag in tags if tag.casefold() != FAVORITE_TAG], favorite


def _highlighted_at(row: dict[str, str], line: int, parsed: ParsedFile) -> str | None:
    """The row's date as stored; one it cannot read is noted, and the highlight kept."""
    raw_date = row.get("Highlighted at", "").strip()
    date = _date(raw_date)
    if date is None and raw_date:
        parsed.notices.append(
            Notice(
                line,
                f"Highlighted at {_shown(raw_date)} is not a date this importer reads; "
                "the highlight is imported without a date",
            )
        )
    return date


def _record(line: int, row: dict[str, str], parsed: ParsedFile) -> ImportRecord | None:
    content = row["Highlight"].strip()
    title = row["Book Title"].strip()
    if not content:
        parsed.rejected.append(Notice(line, "empty Highlight"))
        return None
    if not title:
        parsed.rejected.append(Notice(line, "empty Book Title"))
        return None
    author = row.get("Book Author", "").strip()
    kind = _source_type(row, line, parsed)
    source: dict[str, Any] = {"name": title, "type": kind}
    if author:
        source["author"] = author
    asin = row.get("Amazon Book ID", "").strip()
    if asin:
        source["asin"] = asin
    tagged = _tags_of(row, line, parsed)
    if tagged is None:
        return None
    tags, favorite = tagged
    metadata: dict[str, Any] = {"imported_from": "readwise"}
    if asin:
        metadata["asin"] = asin  # the API does not return a source's asin; exports need it
    colour = row.get("Color", "").strip()
    if colour:
        metadata["color"] = colour
    location_type = row.get("Location Type", "").strip()
    raw_location = row.get("Location", "").strip()
    if location_type:
        metadata["location_type"] = location_type
    highlight: dict[str, Any] = {"content": content, "metadata": metadata}
    note = row.get("Note", "").strip()
    if note:
        highlight["note"] = note
    if tags:
        highlight["tags"] = tags
    if favorite:
        highlight["favorite"] = True
    location = _location(raw_location)
    if location is not None:
        highlight["location"] = location
    elif raw_location:
        metadata["location"] = raw_location
    date = _highlighted_at(row, line, parsed)
    if date is not None:
        highlight["date"] = date
    key_source = source_key(title, author, kind)
    digest = hashlib.sha1(content.encode()).hexdigest()[:16]
    return ImportRecord(
        line=line,
        source_key=key_source,
        source=source,
        key=f"readwise:{hashlib.sha1(key_source.encode()).hexdigest()[:16]}:"
        f"{location_type}:{raw_location}:{digest}",
        highlight=highlight,
    )
