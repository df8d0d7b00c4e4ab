"""Slicing a body by `offset` and `max_chars` with the spec's arithmetic."""

from __future__ import annotations

import json

import pytest

from screvi_mcp.local.storage.store.chunks import slice_content

BODY = "".join(chr(ord("a") + i % 26) for i in range(2500))


def test_whole_body_without_bounds() -> None:
    piece = slice_content(BODY)
    assert (piece.content, piece.content_length, piece.content_offset) == (BODY, 2500, 0)
    assert not piece.content_truncated


def test_reading_in_chunks_covers_the_body_exactly_once() -> None:
    parts: list[str] = []
    offset = 0
    while True:
        piece = slice_content(BODY, offset, 1000)
        assert piece.content is not None
        assert piece.content_length == 2500
        assert piece.content_offset == offset
        assert piece.content_truncated == (offset + len(piece.content) < 2500)
        parts.append(piece.content)
        if not piece.content_truncated:
            break
        offset += len(piece.content)
    assert [len(p) for p in parts] == [1000, 1000, 500]
    assert "".join(parts) == BODY


def test_offset_at_or_past_the_end() -> None:
    at_end = slice_content(BODY, 2500, 1000)
    past = slice_content(BODY, 9000, 1000)
    assert (at_end.content, at_end.content_offset, at_end.content_truncated) == ("", 2500, False)
    assert (past.content, past.content_offset, past.content_truncated) == ("", 9000, False)
    assert past.content_length == 2500


def test_no_body_yet() -> None:
    piece = slice_content(None, 0, 1000)
    assert piece.content is None
    assert (piece.content_length, piece.content_offset, piece.content_truncated) == (0, 0, False)


def test_exact_fit_is_not_truncated() -> None:
    piece = slice_content(BODY, 1500, 1000)
    assert len(piece.content or "") == 1000
    assert not piece.content_truncated


def test_characters_are_code_points_not_utf16_units() -> None:
    body = "😀" * 1500  # each one a surrogate pair in UTF-16, one character here
    piece = slice_content(body, 0, 1000)
    assert piece.content == "😀" * 1000
    assert piece.content_length == 1500
    piece.content.encode("utf-8")  # no lone surrogate: encodes cleanly
    json.dumps(piece.content, ensure_ascii=True)


@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_surrogate_pairs_held_as_two_code_points_are_never_split(offset: int) -> None:
    # A string that (wrongly) holds UTF-16 halves as code points: boundaries skip inside pairs.
    pair = "\ud83d\ude00"
    body = ("x" + pair) * 500
    for max_chars in (1, 2, 1000):
        piece = slice_content(body, offset, max_chars)
        assert piece.content is not None
        text = piece.content
        for index, ch in enumerate(text):
            if "\ud800" <= ch <= "\udbff":
                assert index + 1 < len(text) and "\udc00" <= text[index + 1] <= "\udfff"
            if "\udc00" <= ch <= "\udfff":
                assert index > 0 and "\ud800" <= text[index - 1] <= "\udbff"
        assert piece.content_truncated == (piece.content_offset + len(text) < piece.content_length)


def test_lone_surrogates_never_leave() -> None:
    piece = slice_content("ab\ud800cd\udc00e", 0, 1000)
    assert piece.content == "ab\ufffdcd\ufffde"
    assert piece.content_length == 7
