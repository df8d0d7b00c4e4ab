"""read_article's chunks end between words and join back to the exact body."""

from __future__ import annotations

import re
from pathlib import Path

from server_testkit import call_ok, insert_article, mcp_client

_POSITION = re.compile(r"\[Characters (\d+)–(\d+) of (\d+)\.")


def _body() -> str:
    words = ["reading", "margins", "übermäßig", "патience", "a", "incomprehensibilities", "🙂x"]
    paragraphs = []
    for n in range(40):
        line = " ".join(words[(n * 7 + i) % len(words)] for i in range(25 + n % 9))
        paragraphs.append(f"{n}. {line}.")
    return "\n\n".join(paragraphs)


async def test_chunks_end_at_word_boundaries_and_join_exactly(library_path: Path) -> None:
    body = _body()
    article_id = insert_article(
        library_path,
        url="http://127.0.0.1:9/words",
        title="Words",
        parse_state="parsed",
        text=body,
    )
    max_chars = 1000
    offset, pieces = 0, []
    async with mcp_client(library_path) as client:
        for _ in range(100):  # bounded: the body is a few thousand characters
            text = await call_ok(
                client,
                "read_article",
                {"article_id": article_id, "offset": offset, "max_chars": max_chars},
            )
            found = _POSITION.search(text)
            assert found is not None, text
            start, end, length = map(int, found.groups())
            assert (start, length) == (offset, len(body))
            assert 0 < end - start <= max_chars
            assert body[start:end] in text
            pieces.append(body[start:end])
            if end == len(body):
                assert "This is the end of the article." in text
                break
            # Between two words: the chunk ends in whitespace, or the next one starts with it.
            assert body[end - 1].isspace() or body[end].isspace(), (body[end - 5 : end + 5],)
            assert f"offset={end}" in text
            offset = end
    assert "".join(pieces) == body
    assert len(pieces) > 3
