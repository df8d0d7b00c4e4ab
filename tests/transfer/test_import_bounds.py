"""Import parsing in linear time, lengths checked before the expensive work, and Kindle
separators a few `=` off (issue 31, items 5 and 9)."""

from __future__ import annotations

import time

from screvi_mcp.contract import MAX_HIGHLIGHT_TEXT
from screvi_mcp.transfer import kindle, readwise

META = "- Your Highlight on page {page} | location {start}-{end} | Added on Monday, 3 March 2024"


def clip(title: str, start: int, end: int, text: str, separator: str = "==========") -> str:
    meta = META.format(page=start // 10 + 1, start=start, end=end)
    return f"{title}\n{meta}\n\n{text}\n{separator}\n"


def seconds(work: object) -> float:
    """CPU seconds of this process's work: a busy machine stretches wall time (a linear
    parse of 10,000 clips took 13 s of wall time at load 19) but not the CPU it needs, so
    the bounds below still tell linear from quadratic (36 s and more) there."""
    began = time.process_time()
    work()  # type: ignore[operator]
    return time.process_time() - began


def test_separators_of_nine_or_eleven_signs_still_end_a_clip() -> None:
    """They merged two clips: the next title landed inside the previous highlight, and the
    summary said nothing was rejected."""
    text = (
        clip("First Book (A. Writer)", 10, 12, "The first passage.", "=" * 9)
        + clip("Second Book (B. Writer)", 20, 22, "The second passage.", "=" * 11)
        + clip("Third Book (C. Writer)", 30, 32, "The third passage.")
    )
    parsed = kindle.parse("My Clippings.txt", text.encode())
    contents = [record.highlight["content"] for record in parsed.records]
    assert contents == ["The first passage.", "The second passage.", "The third passage."]
    assert [record.source["name"] for record in parsed.records] == [
        "First Book",
        "Second Book",
        "Third Book",
    ]


def test_one_book_of_many_clips_parses_in_linear_time() -> None:
    """10,000 clips of one book took 36 s (each compared with every earlier one)."""
    text = "".join(
        clip("Big Book (Someone)", n * 10, n * 10 + 3, f"Passage number {n} of the book.")
        for n in range(10_000)
    )
    raw = text.encode()
    parsed: list[kindle.ParsedFile] = []
    assert seconds(lambda: parsed.append(kindle.parse("clips.txt", raw))) < 10.0
    assert len(parsed[0].records) == 10_000


def _noise(seed: int, length: int) -> str:
    import random

    chooser = random.Random(seed)
    return "".join(chooser.choice("abcd") for _ in range(length))


def test_overlapping_long_clips_are_compared_in_linear_time() -> None:
    """Two overlapping 20,000-character clips (a 40 KB file) took 54-207 s to compare."""
    # Few distinct characters: each one matches thousands of places in the other text.
    first, second = _noise(1, MAX_HIGHLIGHT_TEXT), _noise(2, MAX_HIGHLIGHT_TEXT)
    text = clip("Book (X)", 100, 200, first) + clip("Book (X)", 150, 250, second)
    parsed: list[kindle.ParsedFile] = []
    assert seconds(lambda: parsed.append(kindle.parse("clips.txt", text.encode()))) < 5.0
    assert len(parsed[0].records) == 2  # different texts: both kept


def test_a_re_highlighted_passage_is_still_found_by_its_shared_text() -> None:
    shared = "a long stretch of text both versions share " * 20
    text = clip("Book (X)", 100, 120, "Intro. " + shared) + clip(
        "Book (X)", 101, 125, shared + " and more."
    )
    parsed = kindle.parse("clips.txt", text.encode())
    kept = [record.highlight["content"] for record in parsed.records]
    assert kept == [(shared + " and more.").strip()]


def test_a_clip_longer_than_the_api_allows_is_rejected_before_comparing() -> None:
    text = clip("Book (X)", 1, 2, "x" * (MAX_HIGHLIGHT_TEXT + 1)) + clip("Book (X)", 1, 3, "short")
    parsed = kindle.parse("clips.txt", text.encode())
    assert [record.highlight["content"] for record in parsed.records] == ["short"]
    assert any("20000 characters" in notice.reason for notice in parsed.rejected)


def test_a_cell_of_twenty_thousand_document_tags_is_refused_quickly() -> None:
    """20,000 document tags in one cell took 94 s (each name checked against a set rebuilt
    for every tag)."""
    tags = ",".join(f"t{n}" for n in range(20_000))  # under the csv module's field limit
    text = f'Highlight,Book Title,Document tags\nA passage,A Book,"{tags}"\nOther,A Book,one\n'
    parsed: list[readwise.ParsedFile] = []
    assert seconds(lambda: parsed.append(readwise.parse("export.csv", text.encode()))) < 5.0
    assert [record.highlight["content"] for record in parsed[0].records] == ["Other"]
    assert any("tags" in notice.reason for notice in parsed[0].rejected)
