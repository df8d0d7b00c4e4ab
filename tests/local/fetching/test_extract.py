"""Extraction of HTML (trafilatura + nh3) and PDF (pypdf) bodies."""

from __future__ import annotations

import pytest
from fetching_site import ARTICLE_HTML, BINARY_BODY, PDF_BODY

from screvi_mcp.local.fetching.extract import (
    ExtractionError,
    clean_text,
    extract_html,
    extract_pdf,
    sanitise_html,
)
from screvi_mcp.local.fetching.fetcher import FetchResult
from screvi_mcp.local.fetching.pipeline import extract_fetched

URL = "https://www.example.org/essays/reading-slowly?utm_source=feed"
MARKERS = ("NAV-MARKER", "AD-MARKER", "COMMENT-MARKER", "SCRIPT-MARKER", "TRACKER-MARKER")


def test_the_article_is_extracted_with_its_metadata() -> None:
    article = extract_html(ARTICLE_HTML, url=URL, charset="utf-8")
    assert article.title == "The Quiet Art of Reading Slowly"
    assert article.author == "Ada Lovelace"
    assert article.site_name == "Example Review"
    assert article.published_date == "2024-03-05T00:00:00.000000Z"
    assert article.language == "en-GB"
    assert article.excerpt == "Why reading slowly makes ideas stick."
    assert article.image_url == "https://www.example.org/img/lead.jpg"
    assert article.canonical_url == "https://example.org/essays/reading-slowly"
    assert article.source_domain == "example.org"
    assert article.pdf_url is None


def test_navigation_ads_comments_and_scripts_are_left_out() -> None:
    article = extract_html(ARTICLE_HTML, url=URL, charset="utf-8")
    for marker in MARKERS:
        assert marker not in article.content_text
        assert marker not in article.content_html
    assert "Monks copied manuscripts" in article.content_text
    assert "日本の読者" in article.content_text


def test_text_is_clean_paragraphs() -> None:
    text = extract_html(ARTICLE_HTML, url=URL).content_text
    paragraphs = text.split("\n\n")
    assert paragraphs[1].startswith("Reading slowly is an old practice.")
    assert all(p == p.strip() and "\n" not in p for p in paragraphs)
    assert "<" not in text


def test_html_is_sanitised() -> None:
    html = extract_html(ARTICLE_HTML, url=URL).content_html
    assert "<p>" in html
    assert "<script" not in html and "onclick" not in html and "<style" not in html
    assert "<html" not in html and "<body" not in html
    assert 'href="https://www.example.org/notes"' in html
    assert 'rel="noopener noreferrer nofollow"' in html


def test_word_count_and_reading_time() -> None:
    article = extract_html(ARTICLE_HTML, url=URL)
    assert article.word_count == len(article.content_text.split())
    assert 80 < article.word_count < 130
    assert article.reading_time_minutes == 1


def test_sanitiser_removes_active_content() -> None:
    dirty = (
        '<p onclick="x()">Hi <a href="javascript:alert(1)">there</a>'
        '<img src="x" onerror="y()"><iframe src="https://evil"></iframe>'
        "<script>bad()</script><style>p{}</style></p>"
    )
    clean = sanitise_html(dirty)
    for bad in ("onclick", "javascript:", "onerror", "<iframe", "bad()", "p{}"):
        assert bad not in clean
    assert "Hi" in clean and "there" in clean


def test_a_page_without_an_article_is_a_clear_failure() -> None:
    with pytest.raises(ExtractionError) as caught:
        extract_html(b"<html><head><title>x</title></head><body></body></html>", url=URL)
    assert caught.value.reason == "no_content"


def test_pdf_text_and_metadata() -> None:
    article = extract_pdf(PDF_BODY, url="https://example.org/papers/notes.pdf")
    assert article.title == "Field Notes on Slow Reading"
    assert article.author == "Grace Hopper"
    assert article.published_date == "2024-03-05T10:00:00.000000Z"
    assert article.pdf_url == "https://example.org/papers/notes.pdf"
    paragraphs = article.content_text.split("\n\n")
    assert paragraphs[0] == "Field Notes"
    assert "their attention twice." in paragraphs[1]  # hyphenated line break undone
    assert paragraphs[-1].startswith("The second page closes the argument")
    assert article.content_html.startswith("<p>Field Notes</p>")
    assert article.word_count == len(article.content_text.split())


def test_a_broken_pdf_is_a_clear_failure() -> None:
    with pytest.raises(ExtractionError) as caught:
        extract_pdf(b"%PDF-1.4\nthis is not really a pdf", url="https://example.org/x.pdf")
    assert caught.value.reason in ("pdf_unreadable", "pdf_no_text")


def result(body: bytes, content_type: str, url: str = URL) -> FetchResult:
    return FetchResult(url=url, status=200, content_type=content_type, charset=None, body=body)


def test_kind_is_chosen_by_content_type_then_by_sniffing() -> None:
    assert extract_fetched(result(PDF_BODY, "application/pdf")).pdf_url == URL
    assert extract_fetched(result(PDF_BODY, "application/octet-stream")).pdf_url == URL
    assert extract_fetched(result(ARTICLE_HTML, "")).title == "The Quiet Art of Reading Slowly"
    text = extract_fetched(result(b"One.\n\nTwo  words.", "text/plain"))
    assert text.content_text == "One.\n\nTwo words."


@pytest.mark.parametrize("content_type", ["image/png", "application/octet-stream", "video/mp4"])
def test_binaries_are_refused(content_type: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        extract_fetched(result(BINARY_BODY, content_type))
    assert caught.value.reason == "unsupported_content_type"


def test_clean_text_replaces_lone_surrogates_and_controls() -> None:
    assert clean_text("a\ud800b\x00c\x07d\ne") == "a\ufffdbcd\ne"
