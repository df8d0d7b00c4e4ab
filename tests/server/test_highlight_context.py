"""get_highlight(context=true): the paragraph around a highlight from a saved article."""

from __future__ import annotations

from pathlib import Path

from server_testkit import Seed, call_ok, mcp_client

from screvi_mcp.server.highlight_context import MAX_CONTEXT_CHARS, locate, paragraph_around


async def test_highlight_from_an_article_comes_with_its_paragraph(
    library_path: Path, seed: Seed
) -> None:
    paragraphs = seed.article_text.split("\n\n")
    third = paragraphs[2]
    # Spaced and cased differently from the body, as a highlighting app may store it.
    quoted = "  ".join(third[:60].upper().split())
    async with mcp_client(library_path) as client:
        made = await call_ok(
            client, "create_highlight", {"content": quoted, "article_id": seed.article_id}
        )
        highlight_id = made.split("id ", 1)[1].split()[0].strip("·,)")
        plain = await call_ok(client, "get_highlight", {"highlight_id": highlight_id})
        shown = await call_ok(
            client, "get_highlight", {"highlight_id": highlight_id, "context": True}
        )
        book = await call_ok(
            client, "get_highlight", {"highlight_id": seed.book_highlight_id, "context": True}
        )
    assert "In context" not in plain
    offset = seed.article_text.index(third)
    assert f'read_article(article_id="{seed.article_id}", offset={offset})' in shown
    assert shown.endswith(third)
    assert paragraphs[1] not in shown and paragraphs[3] not in shown
    assert "No context: this highlight is not from a saved article." in book


def test_an_edited_highlight_is_not_found_rather_than_guessed() -> None:
    assert locate("The tide comes in.\n\nIt goes out.", "the tide goes") is None
    assert locate("The  tide\ncomes in.", "tide comes") == (5, 15)


def test_an_endless_paragraph_is_cut_around_the_highlight() -> None:
    body = "word " * 5000 + "NEEDLE here " + "word " * 5000
    start = body.index("NEEDLE")
    found = paragraph_around(body, start, start + 6)
    assert len(found.text) <= MAX_CONTEXT_CHARS and "NEEDLE" in found.text
    assert body[found.start : found.start + 20].strip() == found.text[:20].strip()
