"""What a file parser hands to the import runner: records with line numbers, and notices.

Parsers know file formats and nothing about the library; the runner (`importer.py`) validates
each record with the library's rules and writes batches through `local/storage/store/imports.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class MalformedFile(ValueError):
    """The file cannot be read as its format at `line`: nothing is imported from it."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}: line {line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class ImportRecord:
    """One highlight to import, with the source it belongs to.

    `source` and `highlight` are request-body payloads (POST /sources, POST /highlights fields)
    still to be validated. `key` and `source_key` are the stable import keys. `span` is the
    location range for formats where a passage can be re-highlighted longer later (Kindle);
    `scope` is the key prefix that such earlier versions share (the book).
    """

    line: int
    source_key: str
    source: dict[str, Any]
    key: str
    highlight: dict[str, Any]
    scope: str | None = None
    span: tuple[int, int] | None = None
    # Keys of earlier versions of this highlight found in the same file (a Kindle passage
    # highlighted again): an item imported under one of them is this highlight.
    earlier_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Notice:
    """A record not imported on purpose (a bookmark, an empty clip, an older version)."""

    line: int
    reason: str


@dataclass
class ParsedFile:
    records: list[ImportRecord] = field(default_factory=list)
    # Reported one by one in the summary (the reader may want to act on them).
    notices: list[Notice] = field(default_factory=list)
    # Structurally fine, but not importable (unknown metadata, no text): reported with lines.
    rejected: list[Notice] = field(default_factory=list)
    # Counted only: bookmarks, superseded versions of a highlight.
    skipped: dict[str, int] = field(default_factory=dict)
    # About the whole file (it is empty, it has only a header): shown first in the summary.
    warnings: list[str] = field(default_factory=list)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


EMPTY_FILE = "the file is empty: there was nothing to import"


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def decode_text(path: str, raw: bytes) -> str:
    """UTF-8 (with or without BOM), or UTF-16 with its byte-order mark (what Windows Notepad
    saves as "Unicode"); a broken byte is reported with its line."""
    if raw.startswith(_UTF16_BOMS):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as error:
            line = raw[: error.start].decode("utf-16", errors="replace").count("\n") + 1
            raise MalformedFile(path, line, "not valid UTF-16 text; save it as UTF-8") from None
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        if _looks_like_utf16(raw):
            raise MalformedFile(
                path, 1, "looks like UTF-16 text without a byte-order mark; save it as UTF-8"
            )
        raise MalformedFile(path, line, "contains NUL bytes: this is not a text file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise MalformedFile(
            path, line, f"not valid UTF-8 (byte 0x{raw[error.start]:02x}); save it as UTF-8"
        ) from None


def _looks_like_utf16(raw: bytes) -> bool:
    """Mostly-Latin text in UTF-16 has a NUL in every other byte; a binary file does not."""
    head = raw[:2000]
    if len(head) < 4:
        return False
    even, odd = head[0::2], head[1::2]
    return max(even.count(0) / len(even), odd.count(0) / len(odd)) > 0.9
