"""Cutting an article's text into passages: about a paragraph each, never more than
`MAX_CHARS`, each with the character offsets `read_article` takes.

Paragraphs (blank-line separated, as extraction writes them) are the natural unit. Short ones
(a heading, a one-line paragraph) are joined to the next until a passage holds `MIN_CHARS`;
long ones are cut between sentences, and a sentence longer than `MAX_CHARS` between words.
A passage of 400-1,000 characters is 100-250 MiniLM tokens: it fits the model's 256-token
window whole, and a match lands within 1,000 characters of what it found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_CHARS = 400
MAX_CHARS = 1000
_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\s*\n\s*\n|\s*$)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？…])[\"'”’)\]]*\s+")


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


def paragraphs(text: str) -> list[Span]:
    """Blank-line separated blocks, without their surrounding whitespace."""
    return [Span(m.start(), m.end()) for m in _PARAGRAPH.finditer(text)]


def _cut_long(text: str, span: Span) -> list[Span]:
    """A paragraph longer than MAX_CHARS, in pieces of at most MAX_CHARS: between sentences
    where it can, else between words, else (no space at all) anywhere."""
    pieces: list[Span] = []
    start = span.start
    while span.end - start > MAX_CHARS:
        limit = start + MAX_CHARS
        window = text[start:limit]
        ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() >= MIN_CHARS // 2]
        if ends:
            cut = start + ends[-1]
        else:
            space = window.rfind(" ")
            cut = start + space + 1 if space > MAX_CHARS // 2 else limit
        stripped = text[start:cut].rstrip()
        pieces.append(Span(start, start + len(stripped)))
        start = cut
        while start < span.end and text[start].isspace():
            start += 1
    if start < span.end:
        pieces.append(Span(start, span.end))
    return pieces


def split_passages(text: str) -> list[Span]:
    """The passages of `text`, in order; every non-blank character is in exactly one."""
    units: list[Span] = []
    for paragraph in paragraphs(text):
        units.extend(_cut_long(text, paragraph) if paragraph.length > MAX_CHARS else [paragraph])
    passages: list[Span] = []
    for unit in units:
        last = passages[-1] if passages else None
        if last is not None and last.length < MIN_CHARS and unit.end - last.start <= MAX_CHARS:
            passages[-1] = Span(last.start, unit.end)
        else:
            passages.append(unit)
    return passages
