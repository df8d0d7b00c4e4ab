"""Kindle `My Clippings.txt` parsing: the quirks devices really write, from written fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp.transfer import kindle
from screvi_mcp.transfer.records import MalformedFile

FIXTURES = Path(__file__).parent / "fixtures"


def parse_fixture(name: str) -> kindle.ParsedFile:
    return kindle.parse(name, (FIXTURES / name).read_bytes())


@pytest.mark.parametrize(
    ("line", "kind", "page", "location", "date"),
    [
        (
            "- Your Highlight on page 12 | location 180-182 | Added on Monday, 3 March 2024 "
            "10:15:02",
            "highlight",
            ("12", "12"),
            (180, 182),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Your Highlight on page 12 | location 180-182 | Added on Monday, March 3, 2024 "
            "10:15:02 PM",
            "highlight",
            ("12", "12"),
            (180, 182),
            "2024-03-03T22:15:02Z",
        ),
        (
            "- Ihre Markierung bei Position 180-182 | Hinzugefügt am Montag, 3. März 2024 10:15:02",
            "highlight",
            None,
            (180, 182),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Ihre Notiz auf Seite 12 | Position 182 | Hinzugefügt am Montag, 3. März 2024 "
            "10:15:02",
            "note",
            ("12", "12"),
            (182, 182),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Ihr Lesezeichen bei Position 200 | Hinzugefügt am Montag, 3. März 2024 10:15:02",
            "bookmark",
            None,
            (200, 200),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Votre surlignement sur la page 12 | emplacement 180-182 | Ajouté le lundi 3 mars "
            "2024 10:15:02",
            "highlight",
            ("12", "12"),
            (180, 182),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Votre note sur l’emplacement 182 | Ajouté le lundi 3 mars 2024 10:15:02",
            "note",
            None,
            (182, 182),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Votre signet sur la page 14 | emplacement 200 | Ajouté le lundi 3 mars 2024 "
            "10:15:02",
            "bookmark",
            ("14", "14"),
            (200, 200),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Tu subrayado en la página 12 | posición 180-182 | Añadido el lunes, 3 de marzo de "
            "2024 10:15:02",
            "highlight",
            ("12", "12"),
            (180, 182),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Tu nota en la posición 182 | Añadido el lunes, 3 de marzo de 2024 10:15:02",
            "note",
            None,
            (182, 182),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Tu marcador en la página 14 | Añadido el lunes, 3 de marzo de 2024 10:15:02",
            "bookmark",
            ("14", "14"),
            None,
            "2024-03-03T10:15:02Z",
        ),
        # Older firmware: "Loc." with the end shortened, US dates with a comma and AM/PM.
        (
            "- Highlight Loc. 180-82 | Added on Monday, March 3, 2014, 10:15 AM",
            "highlight",
            None,
            (180, 182),
            "2014-03-03T10:15:00Z",
        ),
        (
            "- Highlight on Page 40 | Loc. 610-14 | Added on Tuesday, March 4, 2014, 12:05 AM",
            "highlight",
            ("40", "40"),
            (610, 614),
            "2014-03-04T00:05:00Z",
        ),
        (
            "- Note Loc. 182 | Added on Monday, March 3, 2014, 12:16 PM",
            "note",
            None,
            (182, 182),
            "2014-03-03T12:16:00Z",
        ),
        (
            "- Bookmark on Page xiv | Added on Monday, March 3, 2014, 10:20 PM",
            "bookmark",
            ("xiv", "xiv"),
            None,
            "2014-03-03T22:20:00Z",
        ),
        # Japanese and Chinese: the number before the word, AM/PM before the time.
        (
            "- 23ページ|位置No. 335-336のハイライト |作成日: 2019年5月2日木曜日 21:28:53",
            "highlight",
            ("23", "23"),
            (335, 336),
            "2019-05-02T21:28:53Z",
        ),
        (
            "- 您在第 12 页（位置 #180-182）的标注 | 添加于 2024年3月3日星期日 下午10:15:02",
            "highlight",
            ("12", "12"),
            (180, 182),
            "2024-03-03T22:15:02Z",
        ),
        # Italian and Portuguese wordings come from the same tables.
        (
            "- La tua evidenziazione alla posizione 180-182 | Aggiunto in data lunedì 3 marzo "
            "2024 10:15:02",
            "highlight",
            None,
            (180, 182),
            "2024-03-03T10:15:02Z",
        ),
        (
            "- Seu destaque na posição 180-182 | Adicionado: segunda-feira, 3 de março de 2024 "
            "10:15:02",
            "highlight",
            None,
            (180, 182),
            "2024-03-03T10:15:02Z",
        ),
    ],
)
def test_metadata_lines_in_every_language_and_format(
    line: str,
    kind: str,
    page: tuple[str, str] | None,
    location: tuple[int, int] | None,
    date: str,
) -> None:
    assert kindle.parse_metadata(line) == (kind, page, location, date)


def test_an_unreadable_date_leaves_the_date_empty_rather_than_rejecting_the_clip() -> None:
    assert kindle.parse_metadata("- Your Highlight at location 5-6 | Added on sometime") == (
        "highlight",
        None,
        (5, 6),
        None,
    )


@pytest.mark.parametrize(
    ("line", "title", "author"),
    [
        ("Walden (Thoreau, Henry David)", "Walden", "Thoreau, Henry David"),
        (
            "The Lighthouse Keeper's Almanac (Second Edition) (Wren, Mara)",
            "The Lighthouse Keeper's Almanac (Second Edition)",
            "Wren, Mara",
        ),
        (
            "Meditations (Marcus Aurelius (tr. George Long))",
            "Meditations",
            "Marcus Aurelius (tr. George Long)",
        ),
        ("A personal document without author", "A personal document without author", None),
        ("(Only Parentheses)", "(Only Parentheses)", None),
        ("Unbalanced (title) extra)", "Unbalanced (title) extra)", None),
    ],
)
def test_the_author_is_in_the_last_parentheses(line: str, title: str, author: str | None) -> None:
    assert kindle.split_title(line) == (title, author)


def test_english_file_with_bom_crlf_notes_bookmarks_extensions_and_empty_clips() -> None:
    parsed = parse_fixture("clippings_en.txt")
    by_content = {record.highlight["content"]: record for record in parsed.records}
    assert set(by_content) == {
        "The sea keeps its own calendar, and the keeper learns to read it.",
        "Fog is the only visitor who never knocks.",
        "A lamp is a promise made to strangers,\nrenewed every night at dusk.",
        "Old machines hum in a key nobody wrote down.",
        "A thought of my own, typed without selecting text.",
    }
    first = by_content["The sea keeps its own calendar, and the keeper learns to read it."]
    # BOM stripped, title with its own parentheses, author from the last ones.
    assert first.source == {
        "name": "The Lighthouse Keeper's Almanac (Second Edition)",
        "type": "book",
        "author": "Wren, Mara",
    }
    assert first.line == 1
    # The note at location 182 joins the highlight ending there, not the one starting there.
    assert first.highlight["note"] == "Compare with the tide tables in chapter two."
    assert "note" not in by_content["Fog is the only visitor who never knocks."].highlight
    assert first.highlight["location"] == 180
    assert first.highlight["date"] == "2024-03-03T10:15:02Z"
    assert first.highlight["metadata"]["kindle_page"] == "12"
    # The passage extended later is kept once, as its latest (longer) version.
    lamp = by_content["A lamp is a promise made to strangers,\nrenewed every night at dusk."]
    assert lamp.highlight["metadata"]["kindle_location"] == "230-234"
    assert parsed.skipped == {
        "bookmarks": 1,
        "earlier versions of a highlight extended or edited later": 1,
    }
    # The empty clip is reported with its line, not stored.
    assert [(n.line, "clipping limit" in n.reason) for n in parsed.notices] == [(32, True)]
    # A metadata wording no device writes: rejected with the line of that metadata line.
    assert [(n.line, "unrecognised clip type" in n.reason) for n in parsed.rejected] == [(43, True)]
    # A note with no highlight to join is kept as a passage of its own.
    orphan = by_content["A thought of my own, typed without selecting text."]
    assert orphan.highlight["metadata"]["kindle_kind"] == "note"


@pytest.mark.parametrize(
    ("name", "title", "first", "note", "second"),
    [
        (
            "clippings_de.txt",
            "Der Leuchtturmwärter (Roman)",
            "Das Meer führt seinen eigenen Kalender.",
            "Mit den Gezeitentafeln vergleichen.",
            "Eine Lampe ist ein Versprechen an Fremde.",
        ),
        (
            "clippings_fr.txt",
            "Le Gardien du phare",
            "La mer tient son propre calendrier.",
            "Comparer avec les tables des marées.",
            "Une lampe est une promesse faite aux inconnus.",
        ),
        (
            "clippings_es.txt",
            "El guardián del faro",
            "El mar lleva su propio calendario.",
            "Comparar con las tablas de mareas.",
            "Una lámpara es una promesa hecha a desconocidos.",
        ),
    ],
)
def test_german_french_and_spanish_devices(
    name: str, title: str, first: str, note: str, second: str
) -> None:
    parsed = parse_fixture(name)
    assert [r.highlight["content"] for r in parsed.records] == [first, second]
    assert parsed.records[0].source == {"name": title, "type": "book", "author": "Wren, Mara"}
    assert parsed.records[0].highlight["note"] == note
    assert parsed.records[0].highlight["date"] == "2024-03-03T10:15:02Z"
    assert parsed.records[1].highlight["date"] == "2024-03-04T08:00:00Z"
    assert [r.highlight["location"] for r in parsed.records] == [180, 230]
    assert parsed.skipped == {"bookmarks": 1}
    assert not parsed.rejected and not parsed.notices


def test_older_format_without_bom_and_with_lf_and_page_only_clips() -> None:
    parsed = parse_fixture("clippings_old.txt")
    records = {r.highlight["content"]: r for r in parsed.records}
    tide = records["Every pool is a small sea with its own weather."]
    assert tide.highlight["note"] == "Check the pool by the pier."
    assert tide.highlight["metadata"]["kindle_location"] == "180-182"
    assert records["Anemones close when the tide leaves."].highlight["location"] == 610
    page_only = records["A page-only clip from a PDF without locations."]
    assert page_only.highlight["location"] == 7  # the page, when there is no location
    assert page_only.source["author"] == "Coastal Survey Office"
    assert parsed.skipped == {"bookmarks": 1}


def test_a_block_without_its_metadata_line_breaks_the_file_at_that_line() -> None:
    raw = (
        b"Book One (A. Author)\r\n- Your Highlight at location 1-2 | Added on Monday, 3 March "
        b"2024 10:15:02\r\n\r\nFine.\r\n==========\r\nBook Two (B. Author)\r\nno metadata here\r\n"
        b"==========\r\n"
    )
    with pytest.raises(MalformedFile) as broken:
        kindle.parse("clips.txt", raw)
    assert broken.value.line == 7
    assert "metadata line" in broken.value.reason


def test_bad_bytes_and_non_clippings_files_are_reported_with_their_line() -> None:
    raw = "Book (Author)\n- Your Highlight at location 1 | Added on x\n\nok\n==========\n"
    with pytest.raises(MalformedFile) as broken:
        kindle.parse("clips.txt", raw.encode() + b"Bad \xff byte\n==========\n")
    assert broken.value.line == 6 and "UTF-8" in broken.value.reason
    with pytest.raises(MalformedFile) as not_clippings:
        kindle.parse("notes.txt", b"just some text\nwith lines\n")
    assert not_clippings.value.line == 1 and "separator" in not_clippings.value.reason


def test_an_empty_file_has_nothing_to_import() -> None:
    parsed = kindle.parse("empty.txt", b"\xef\xbb\xbf")
    assert parsed.records == [] and not parsed.rejected


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_file_resaved_as_utf16_with_its_byte_order_mark_imports_the_same(
    encoding: str,
) -> None:
    # Windows Notepad's "Unicode" is UTF-16 with a byte-order mark: it used to be refused as
    # "not a text file".
    raw = (FIXTURES / "clippings_en.txt").read_bytes().decode("utf-8-sig")
    bom = b"\xfe\xff" if encoding == "utf-16-be" else b""
    resaved = kindle.parse("clippings_en.txt", bom + raw.encode(encoding))
    assert resaved == parse_fixture("clippings_en.txt")


def test_utf16_without_a_byte_order_mark_says_to_save_as_utf8() -> None:
    raw = "Book (Author)\n- Your Highlight at location 1 | Added on x\n\nok\n==========\n"
    with pytest.raises(MalformedFile) as broken:
        kindle.parse("clips.txt", raw.encode("utf-16-le"))
    assert "UTF-16" in broken.value.reason and "UTF-8" in broken.value.reason
    with pytest.raises(MalformedFile) as binary:
        kindle.parse("clips.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "not a text file" in binary.value.reason
