"""Cutting article text into passages: offsets exact, sizes bounded, nothing lost."""

from __future__ import annotations

import itertools

import pytest

from screvi_mcp.local.passages.split import MAX_CHARS, MIN_CHARS, split_passages


def _check(text: str) -> list[str]:
    spans = split_passages(text)
    pieces = [text[s.start : s.end] for s in spans]
    for span, piece in zip(spans, pieces, strict=True):
        assert 0 < span.length <= MAX_CHARS
        assert piece == piece.strip()
    # In order, not overlapping, and every non-blank character in exactly one passage.
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))
    assert "".join("".join(p.split()) for p in pieces) == "".join(text.split())
    return pieces


def test_short_paragraphs_join_until_a_passage_is_long_enough() -> None:
    text = "\n\n".join(["Heading", "A short line.", "x " * 300, "Another paragraph. " * 10])
    pieces = _check(text)
    assert pieces[0].startswith("Heading\n\nA short line.\n\nx x")
    assert all(len(p) >= MIN_CHARS for p in pieces[:-1])


def test_long_paragraphs_are_cut_between_sentences() -> None:
    sentence = "The tide comes in twice a day and the pools fill again with water. "
    pieces = _check(("  " + sentence * 60).rstrip() + "\n\nEnd.")
    assert len(pieces) >= 4
    assert all(p.endswith(".") for p in pieces)


@pytest.mark.parametrize("text", ["字" * 2500, "a" * 2500 + " tail", "word " * 700])
def test_text_without_sentences_or_spaces_is_still_bounded(text: str) -> None:
    _check(text)


def test_blank_text_has_no_passages() -> None:
    assert split_passages("") == [] and split_passages(" \n\n \n") == []
