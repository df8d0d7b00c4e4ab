"""The paragraph around a highlight, found in the text of the saved article it came from.

Uses only the spec's GET /articles/{id} (text format, in pages), so it works on hosted Screvi,
a mirror and the embedded library alike. The highlight is looked for with whitespace and case
ignored (extraction and highlighting apps space text differently); a highlight edited since
it was made, or not from this text, is reported as not found rather than guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from screvi_mcp.client import ScreviClient
from screvi_mcp.models import Highlight

PAGE_CHARS = 200_000
# Reading stops here: a bound on requests and memory for one tool call.
MAX_BODY_CHARS = 2_000_000
# A "paragraph" longer than this (a PDF without blank lines) is cut around the highlight.
MAX_CONTEXT_CHARS = 3000
ARTICLE_TYPES = frozenset({"article", "pdf"})
_BLANK_LINE = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Context:
    start: int  # character offset in the article's text (read_article's `offset`)
    text: str


def locate(body: str, needle: str) -> tuple[int, int] | None:
    """(start, end) in `body` of `needle`, comparing with whitespace runs squeezed and case
    folded; None when absent."""
    words = needle.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(word) for word in words)
    found = re.search(pattern, body, re.IGNORECASE)
    return None if found is None else (found.start(), found.end())


def paragraph_around(body: str, start: int, end: int) -> Context:
    """The blank-line delimited paragraph(s) holding body[start:end], at most
    MAX_CONTEXT_CHARS (centred on the highlight when cut)."""
    before = [m.end() for m in _BLANK_LINE.finditer(body, 0, start)]
    first = before[-1] if before else 0
    after = _BLANK_LINE.search(body, end)
    last = after.start() if after else len(body)
    if last - first > MAX_CONTEXT_CHARS:
        room = max(MAX_CONTEXT_CHARS - (end - start), 0) // 2
        first, last = max(first, start - room), min(last, end + room)
    return Context(first, body[first:last].strip())


async def find_context(client: ScreviClient, article_id: str, content: str) -> Context | None:
    """The paragraph around `content` in the article's text; None when not found."""
    parts: list[str] = []
    offset = 0
    while offset < MAX_BODY_CHARS:
        article = await client.get_article(
            article_id, format="text", offset=offset or None, max_chars=PAGE_CHARS, highlights=False
        )
        if not article.content:
            break
        parts.append(article.content)
        offset = article.content_offset + len(article.content)
        if not article.content_truncated:
            break
    body = "".join(parts)
    where = locate(body, content)
    return None if where is None else paragraph_around(body, *where)


async def in_context(client: ScreviClient, item: Highlight) -> str:
    """What get_highlight(context=true) adds below the highlight."""
    source = item.source
    if source is None or source.type not in ARTICLE_TYPES:
        return "\n\nNo context: this highlight is not from a saved article."
    found = await find_context(client, source.id, item.content)
    if found is None:
        return (
            "\n\nNo context: the highlight's words were not found in the article's text "
            f"(edited since, or the body is not fetched). Read it with read_article(article_id="
            f'"{source.id}").'
        )
    return (
        f'\n\nIn context (read_article(article_id="{source.id}", offset={found.start}) reads '
        f"on from here):\n{found.text}"
    )
