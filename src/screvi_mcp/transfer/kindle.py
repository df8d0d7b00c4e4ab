"""Kindle's `My Clippings.txt`, as devices really write it.

A file is a list of clips, each ended by a line of ten `=`:

    The Title (Maybe With Parentheses) (Author Name)
    - Your Highlight on page 12 | location 180-182 | Added on Monday, 3 March 2024 10:15:02

    The highlighted text.
    ==========

Devices write a UTF-8 BOM (sometimes again before later titles), CRLF line ends, the
metadata line in the device's language, and older firmware a shorter form ("- Highlight Loc.
180-82 | Added on Monday, March 3, 2014, 10:15 AM"). The metadata line is read by keywords
from the tables below rather than by one pattern per firmware, so a wording not seen before
still parses when its words are known; a new language is a table entry.

What the reader expects from an import: a note joins the highlight at its location;
bookmarks are skipped; a passage highlighted again longer (or shorter) keeps only its latest
version; an empty clip (the publisher's clipping limit was reached) is reported, not stored.
Dates carry no time zone in the file; they are stored as written, read as UTC.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime

from screvi_mcp.contract import MAX_HIGHLIGHT_TEXT
from screvi_mcp.transfer.records import (
    EMPTY_FILE,
    ImportRecord,
    MalformedFile,
    Notice,
    ParsedFile,
    decode_text,
)
from screvi_mcp.transfer.spans import SpanIndex, shares_half

SEPARATOR = "=========="
# Devices write ten; a file edited by hand or by another tool may have a few more or fewer,
# and reading such a line as text merged two clips into one.
_SEPARATOR_LINE = re.compile(r"^[ \t]*={8,12}[ \t\r]*$", re.MULTILINE)

# The kind of clip, by the words that name it (lower case), in every supported language.
# Checked in this order: the first kind whose word appears in the first segment wins.
KIND_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "bookmark",
        (
            *("bookmark", "lesezeichen", "signet", "marcador", "segnalibro", "bladwijzer"),
            *("ブックマーク", "书签"),
        ),
    ),
    ("note", ("note", "notiz", "nota", "notitie", "メモ", "笔记")),
    (
        "highlight",
        (
            *("highlight", "markierung", "surlignement", "subrayado", "evidenziazione"),
            *("destaque", "markering", "clip", "ハイライト", "标注"),
        ),
    ),
)
PAGE_WORDS = ("page", "seite", "página", "pagina", "pág.", "pag.", "blz.")
LOCATION_WORDS = (
    "location",
    "loc.",
    "position",
    "pos.",
    "emplacement",
    "posición",
    "posizione",
    "posição",
    "locatie",
    "位置no.",
    "位置",
)
ADDED_WORDS = (
    "added on",
    "hinzugefügt am",
    "ajouté le",
    "añadido el",
    "aggiunto in data",
    "adicionado:",
    "adicionado em",
    "toegevoegd op",
    "作成日",
    "添加于",
)
MONTHS: dict[str, int] = {}
for _names in (
    "january february march april may june july august september october november december",
    "januar februar märz april mai juni juli august september oktober november dezember",
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "januari februari maart april mei juni juli augustus september oktober november december",
):
    for _number, _name in enumerate(_names.split(), start=1):
        MONTHS.setdefault(_name, _number)
# Short and Austrian forms seen on devices.
MONTHS.update({"jänner": 1, "sept": 9, "setiembre": 9})

_NUMBER_RANGE = re.compile(
    r"[\s:.#]*([0-9]+|[ivxlcdm]+\b)(?:\s*[-–]\s*([0-9]+|[ivxlcdm]+\b))?", re.IGNORECASE
)
# Japanese and Chinese put the number before the word: "23ページ", "第 12 页".
_PAGE_AFTER_NUMBER = re.compile(r"(\d+)\s*(?:ページ|页)")
_YEAR_MONTH_DAY = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
_TIME = re.compile(
    r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(a\.?\s?m\.?|p\.?\s?m\.?)?(?![a-z])", re.IGNORECASE
)


@dataclass
class Clip:
    line: int
    title: str
    author: str | None
    kind: str
    page: tuple[str, str] | None
    location: tuple[int, int] | None
    date: str | None
    text: str
    notes: list[str] = field(default_factory=list)
    # Import keys of the earlier versions of this passage in the file (highlighted again
    # longer or shorter): an import that stored one of them updates it to this version.
    superseded: list[str] = field(default_factory=list)

    @property
    def span(self) -> tuple[int, int] | None:
        if self.location is not None:
            return self.location
        if self.page is not None and self.page[0].isdigit() and self.page[1].isdigit():
            return int(self.page[0]), int(self.page[1])
        return None


def split_title(line: str) -> tuple[str, str | None]:
    """Title and author: the author is in the last parentheses (titles may have their own)."""
    text = line.strip()
    if not text.endswith(")"):
        return text, None
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        if text[index] == ")":
            depth += 1
        elif text[index] == "(":
            depth -= 1
            if depth == 0:
                title = text[:index].strip()
                author = text[index + 1 : -1].strip()
                if not title:  # "(Only Parentheses)": a title, not an author
                    return text, None
                return title, author or None
    return text, None


def _number_range(segment: str, words: tuple[str, ...]) -> tuple[str, str] | None:
    lower = segment.lower()
    for word in words:
        at = lower.find(word)
        if at < 0:
            continue
        match = _NUMBER_RANGE.match(segment, at + len(word))
        if match is None:
            continue
        start = match.group(1)
        end = match.group(2) or start
        if start.isdigit() and end.isdigit() and len(end) < len(start):
            # Older firmware shortens the end: "180-82" means 180-182.
            end = start[: len(start) - len(end)] + end
        return start, end
    return None


def _month(word: str) -> int | None:
    """A month name in any supported language, or its abbreviation ("Mar.", "sept")."""
    if word in MONTHS:
        return MONTHS[word]
    if len(word) < 3:
        return None
    found = {number for name, number in MONTHS.items() if name.startswith(word)}
    return found.pop() if len(found) == 1 else None


def parse_date(text: str) -> str | None:
    """An "Added on" date in any supported language, as ISO 8601 (UTC); None if unreadable."""
    lower = text.lower()
    for word, meridiem in (("下午", " pm"), ("上午", " am"), ("午後", " pm"), ("午前", " am")):
        if word in lower:  # Chinese and Japanese put AM/PM before the time
            lower = lower.replace(word, " ")
            found = _TIME.search(lower)
            if found:
                lower = lower[: found.end()] + meridiem + lower[found.end() :]
    time_match = _TIME.search(lower)
    hour = minute = second = 0
    if time_match:
        hour, minute = int(time_match.group(1)), int(time_match.group(2))
        second = int(time_match.group(3) or 0)
        meridiem = (time_match.group(4) or "").replace(".", "").replace(" ", "")
        if meridiem == "pm" and hour < 12:
            hour += 12
        elif meridiem == "am" and hour == 12:
            hour = 0
        lower = lower[: time_match.start()] + " " + lower[time_match.end() :]
    year = month = day = None
    east_asian = _YEAR_MONTH_DAY.search(lower)  # 2024年3月3日
    if east_asian:
        year, month, day = (int(part) for part in east_asian.groups())
    words = [] if east_asian else re.findall(r"[^\W\d_]+|\d+", lower)
    for word in words:
        if word.isdigit():
            if len(word) == 4 and year is None:
                year = int(word)
            elif len(word) <= 2 and day is None:
                day = int(word)
        elif month is None:
            month = _month(word)
    if year is None or month is None or day is None:
        return None
    try:
        moment = datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


Metadata = tuple[str, tuple[str, str] | None, tuple[int, int] | None, str | None]


def parse_metadata(line: str) -> Metadata:
    """(kind, page range, location range, ISO date) of a metadata line; ValueError if unknown."""
    body = line.strip().lstrip("-").strip()
    segments = [segment.strip() for segment in body.split("|")]
    # The kind is named in the first segment, except where a page comes first (Japanese).
    kind = next(
        (
            name
            for segment in segments
            for name, words in KIND_WORDS
            if any(word in segment.lower() for word in words)
        ),
        None,
    )
    if kind is None:
        raise ValueError(f"unrecognised clip type in {line.strip()!r}")
    page = location = None
    date = None
    for segment in segments:
        lower = segment.lower()
        added = next((word for word in ADDED_WORDS if word in lower), None)
        if added is not None:
            date = parse_date(segment[lower.index(added) + len(added) :])
            continue
        if location is None:
            found = _number_range(segment, LOCATION_WORDS)
            if found is not None and found[0].isdigit() and found[1].isdigit():
                location = (int(found[0]), int(found[1]))
                continue
        if page is None:
            page = _number_range(segment, PAGE_WORDS)
    if page is None:
        trailing = _PAGE_AFTER_NUMBER.search(body)
        if trailing:
            page = (trailing.group(1), trailing.group(1))
    if page is None and location is None and date is None:
        raise ValueError(f"no page, location or date in {line.strip()!r}")
    return kind, page, location, date


def read_clips(path: str, raw: bytes, parsed: ParsedFile) -> list[Clip]:
    """Every clip of the file in order; broken structure raises `MalformedFile`."""
    text = decode_text(path, raw).replace("\ufeff", "")
    lines = text.splitlines()
    if text.strip() and not _SEPARATOR_LINE.search(text):
        raise MalformedFile(path, 1, f"no '{SEPARATOR}' separator: not a Kindle clippings file")
    clips: list[Clip] = []
    block: list[tuple[int, str]] = []
    for number, content in enumerate([*lines, SEPARATOR], start=1):
        if not _SEPARATOR_LINE.match(content):
            if block or content.strip():  # blank lines before a title are not kept
                block.append((number, content))
            continue
        if block:
            clip = _read_block(path, block, parsed)
            if clip is not None:
                clips.append(clip)
        block = []
    return clips


def _read_block(path: str, block: list[tuple[int, str]], parsed: ParsedFile) -> Clip | None:
    start, title_line = block[0]
    if len(block) < 2 or not block[1][1].lstrip().startswith("-"):
        where = block[1][0] if len(block) > 1 else start
        raise MalformedFile(
            path, where, "expected a metadata line starting with '- ' after the title line"
        )
    try:
        kind, page, location, date = parse_metadata(block[1][1])
    except ValueError as error:
        parsed.rejected.append(Notice(block[1][0], str(error)))
        return None
    title, author = split_title(title_line)
    body = "\n".join(content for _, content in block[2:]).strip()
    return Clip(start, title, author, kind, page, location, date, body)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _same_passage(old: Clip, new: Clip) -> bool:
    """A later clip that re-highlights an earlier one: overlapping span, and the same start or
    text in common (adjacent highlights often share one coarse Kindle location)."""
    if old.span is None or new.span is None or not _overlaps(old.span, new.span):
        return False
    if old.location is not None and new.location is not None and old.span[0] == new.span[0]:
        return True
    a, b = old.text.casefold(), new.text.casefold()
    if not a or not b or a in b or b in a:
        return True
    return shares_half(a, b)


def book_key(title: str, author: str | None) -> str:
    return "book:" + " ".join(f"{title}|{author or ''}".casefold().split())


def _highlight_key(clip: Clip) -> str:
    book = hashlib.sha1(book_key(clip.title, clip.author).encode()).hexdigest()[:16]
    if clip.location is not None:
        return f"kindle:{book}:{clip.location[0]}-{clip.location[1]}"
    digest = hashlib.sha1(clip.text.encode()).hexdigest()[:16]
    page = f"p{clip.page[0]}-{clip.page[1]}" if clip.page else "p?"
    return f"kindle:{book}:{page}:{digest}"


def parse(path: str, raw: bytes) -> ParsedFile:
    """Parse a whole clippings file into import records (nothing is written here)."""
    parsed = ParsedFile()
    clips = read_clips(path, raw, parsed)
    if not clips and not parsed.records and not parsed.rejected and not parsed.notices:
        parsed.warnings.append(
            EMPTY_FILE
            if not decode_text(path, raw).strip()
            else "no clips found in the file: nothing to import (is it My Clippings.txt?)"
        )
    kept: dict[int, Clip] = {}  # by id(): removing one is not a scan of the list
    notes: list[Clip] = []
    by_book: dict[tuple[str, str | None], SpanIndex[Clip]] = {}
    handles: dict[int, int] = {}
    for clip in clips:
        if not _admissible(clip, parsed):
            continue
        if clip.kind == "note":
            notes.append(clip)
            continue
        same_book = by_book.setdefault((clip.title, clip.author), SpanIndex())
        earlier = None
        if clip.span is not None:
            candidates = same_book.overlapping(clip.span)
            earlier = next((old for old in candidates if _same_passage(old, clip)), None)
        if earlier is not None:
            same_book.remove(handles.pop(id(earlier)))
            del kept[id(earlier)]
            clip.superseded.extend([_highlight_key(earlier), *earlier.superseded])
            parsed.skip("earlier versions of a highlight extended or edited later")
        if clip.span is not None:
            handles[id(clip)] = same_book.add(clip.span, clip)
        kept[id(clip)] = clip
    for note in notes:
        owner = _note_owner(note, by_book.get((note.title, note.author)))
        if owner is None:
            # A note typed without selecting text: the note is the passage.
            kept[id(note)] = note
        else:
            owner.notes.append(note.text)
    for clip in kept.values():
        parsed.records.append(_record(clip))
    return parsed


def _admissible(clip: Clip, parsed: ParsedFile) -> bool:
    """Whether a clip is a highlight or note to import; says why not. The length is checked
    here, before a clip is compared with others (the API refuses it anyway)."""
    if clip.kind == "bookmark":
        parsed.skip("bookmarks")
        return False
    if len(clip.text) > MAX_HIGHLIGHT_TEXT:
        parsed.rejected.append(
            Notice(clip.line, f"longer than {MAX_HIGHLIGHT_TEXT} characters (the API's limit)")
        )
        return False
    if clip.text:
        return True
    if clip.kind == "note":
        parsed.rejected.append(Notice(clip.line, "empty note"))
    else:
        parsed.notices.append(
            Notice(
                clip.line,
                f"empty highlight in {clip.title!r} (the book's clipping limit was "
                "probably reached): not stored",
            )
        )
    return False


def _note_owner(note: Clip, candidates: SpanIndex[Clip] | None) -> Clip | None:
    """The highlight a note belongs to: the one whose span holds the note's position, the one
    ending there first (Kindle places a note at the end of its highlight), latest first."""
    point = note.span
    if point is None or candidates is None:
        return None
    holding = candidates.overlapping(point)
    if not holding:
        return None
    ending = [clip for clip in holding if clip.span and clip.span[1] == point[0]]
    return (ending or holding)[-1]


def _record(clip: Clip) -> ImportRecord:
    metadata: dict[str, object] = {"imported_from": "kindle"}
    if clip.location is not None:
        start, end = clip.location
        metadata["kindle_location"] = str(start) if start == end else f"{start}-{end}"
    if clip.page is not None:
        metadata["kindle_page"] = (
            clip.page[0] if clip.page[0] == clip.page[1] else f"{clip.page[0]}-{clip.page[1]}"
        )
    if clip.kind == "note":
        metadata["kindle_kind"] = "note"
    location: int | None = None
    if clip.location is not None:
        location = clip.location[0]
    elif clip.page is not None and clip.page[0].isdigit():
        location = int(clip.page[0])
    highlight: dict[str, object] = {"content": clip.text, "metadata": metadata}
    if clip.notes:
        highlight["note"] = "\n\n".join(clip.notes)
    if location is not None:
        highlight["location"] = location
    if clip.date is not None:
        highlight["date"] = clip.date
    source: dict[str, object] = {"name": clip.title or "Untitled", "type": "book"}
    if clip.author:
        source["author"] = clip.author
    own_key = _highlight_key(clip)
    scope = own_key.rsplit(":", 1)[0] + ":" if clip.location is not None else None
    return ImportRecord(
        line=clip.line,
        source_key=book_key(clip.title, clip.author),
        source=source,
        key=own_key,
        highlight=highlight,
        scope=scope,
        span=clip.location,
        earlier_keys=tuple(dict.fromkeys(key for key in clip.superseded if key != own_key)),
    )
