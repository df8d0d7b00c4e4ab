"""Turning a fetched body into an article: trafilatura for HTML, pypdf for PDF, nh3 to sanitise.

The heavy libraries are imported inside the functions, so the hosted-API path (which never
extracts anything) does not need the `local` extra installed.
"""

from __future__ import annotations

import html
import io
import logging
import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from screvi_mcp import contract
from screvi_mcp.local.fetching.urls import host_of
from screvi_mcp.local.storage import clock

logger = logging.getLogger(__name__)

WORDS_PER_MINUTE = 230
EXCERPT_CHARS = 300
MAX_PDF_PAGES = 2000

# What a reader needs and nothing that runs: no script, style, iframe, form or event handler.
ALLOWED_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "caption",
        "cite",
        "code",
        "dd",
        "del",
        "details",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "ins",
        "kbd",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "time",
        "tr",
        "u",
        "ul",
    }
)
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "time": {"datetime"},
    "ol": {"start"},
}
ALLOWED_URL_SCHEMES = frozenset({"http", "https", "mailto"})

_SURROGATES = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class ExtractionError(Exception):
    """No article could be made from the body. `reason` is a stable code for parse_failure."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(slots=True)
class ExtractedArticle:
    content_html: str
    content_text: str
    title: str | None = None
    author: str | None = None
    site_name: str | None = None
    published_date: str | None = None  # stored timestamp format (local/storage/clock.py)
    language: str | None = None
    excerpt: str | None = None
    image_url: str | None = None
    canonical_url: str | None = None
    source_domain: str | None = None
    word_count: int = 0
    reading_time_minutes: int = 0
    pdf_url: str | None = None


def clean_text(text: str) -> str:
    """Text safe to store and serve: no lone surrogates, NULs or stray control characters."""
    return _CONTROL.sub("", _SURROGATES.sub("\ufffd", text))


def _short(value: Any, limit: int = contract.MAX_ARTICLE_TITLE) -> str | None:
    # The spec's bounds for the fields a reader may later PATCH: what extraction stores fits them.
    if not isinstance(value, str):
        return None
    text = " ".join(clean_text(value).split())
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def count_words(text: str) -> int:
    return len(text.split())


def reading_minutes(words: int) -> int:
    return max(1, math.ceil(words / WORDS_PER_MINUTE)) if words else 0


def make_excerpt(text: str, limit: int = EXCERPT_CHARS) -> str | None:
    """The opening of `text`, cut at a word boundary, for articles without a description."""
    flat = " ".join(text.split())
    if not flat:
        return None
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:.") + "…"


def _absolute_http(base: str, value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        joined = urljoin(base, value.strip())
    except ValueError:
        return None
    return joined if urlsplit(joined).scheme in ("http", "https") else None


def _stored_date(value: Any) -> str | None:
    if isinstance(value, datetime):
        return clock.format_timestamp(value)
    if isinstance(value, date):
        return clock.format_timestamp(datetime(value.year, value.month, value.day, tzinfo=UTC))
    if isinstance(value, str) and value.strip():
        try:
            return clock.normalise_timestamp(value)
        except ValueError:
            return None
    return None


def sanitise_html(fragment: str) -> str:
    """HTML with only reading markup left; links open nothing and tell nothing (nh3)."""
    import nh3

    cleaned: str = nh3.clean(
        fragment,
        tags=set(ALLOWED_TAGS),
        clean_content_tags={"script", "style", "noscript", "template", "iframe", "object"},
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=set(ALLOWED_URL_SCHEMES),
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return cleaned.strip()


def paragraphs_to_text(lines: list[str]) -> str:
    """Plain text: one paragraph per non-empty line, paragraphs separated by a blank line."""
    kept = [" ".join(line.split()) for line in lines]
    return "\n\n".join(line for line in kept if line)


def _html_lang(body: bytes | str) -> str | None:
    head = body[:4096] if isinstance(body, str) else body[:4096].decode("latin-1")
    match = re.search(
        r"<html\b[^>]*?\blang\s*=\s*[\"']?([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*)", head, re.I
    )
    return match.group(1).replace("_", "-") if match else None


def _decode(body: bytes, charset: str | None) -> bytes | str:
    if charset:
        try:
            return body.decode(charset, errors="replace")
        except LookupError:
            pass  # an unknown charset name: let trafilatura sniff
    return body


def extract_html(body: bytes, *, url: str, charset: str | None = None) -> ExtractedArticle:
    """The readable article in an HTML page (navigation, ads and comments left out)."""
    import trafilatura

    document = _decode(body, charset)
    try:
        meta = trafilatura.bare_extraction(
            document,
            url=url,
            include_comments=False,
            include_tables=True,
            with_metadata=True,
        )
        rich = trafilatura.extract(
            document,
            url=url,
            include_comments=False,
            include_tables=True,
            include_links=True,
            include_images=True,
            include_formatting=True,
            output_format="html",
        )
    except Exception as exc:  # trafilatura raises assorted lxml and value errors on bad markup
        logger.warning("trafilatura failed on %s: %r", url, exc)
        raise ExtractionError("parse_error", "the page's HTML could not be parsed") from None

    info: dict[str, Any] = {}
    if meta is not None:
        info = meta if isinstance(meta, dict) else meta.as_dict()
    raw_text = info.get("text") or ""
    text = clean_text(paragraphs_to_text(str(raw_text).splitlines()))
    if not text or not rich:
        raise ExtractionError("no_content", "no readable article text was found on the page")
    content_html = clean_text(sanitise_html(rich))
    words = count_words(text)
    language = _short(info.get("language"), 35) or _html_lang(document)
    return ExtractedArticle(
        content_html=content_html,
        content_text=text,
        title=_short(info.get("title")),
        author=_short(info.get("author"), contract.MAX_AUTHOR),
        site_name=_short(info.get("sitename"), 300),
        published_date=_stored_date(info.get("date")),
        language=language,
        excerpt=_short(info.get("description"), contract.MAX_EXCERPT) or make_excerpt(text),
        image_url=_absolute_http(url, info.get("image")),
        canonical_url=_absolute_http(url, info.get("url")),
        source_domain=host_of(url) or None,
        word_count=words,
        reading_time_minutes=reading_minutes(words),
    )


def _join_lines(lines: list[str]) -> str:
    text = ""
    for line in lines:
        if text.endswith("-") and line[:1].islower() and text[-2:-1].isalpha():
            text = text[:-1] + line  # a word hyphenated across the line break
        else:
            text = f"{text} {line}" if text else line
    return " ".join(text.split())


def _pdf_paragraphs(page_text: str) -> list[str]:
    """Paragraphs of one page of PDF text, whose lines are hard-wrapped.

    pypdf gives one line per printed line and rarely an empty line between paragraphs, so a
    line clearly shorter than the page's usual line length (a paragraph's last line, a
    heading) ends a paragraph too.
    """
    lines = [line.strip() for line in page_text.splitlines()]
    lengths = sorted(len(line) for line in lines if line)
    typical = lengths[int(0.8 * (len(lengths) - 1))] if lengths else 0
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        if line:
            current.append(line)
        if current and (not line or len(line) < 0.7 * typical):
            paragraphs.append(_join_lines(current))
            current = []
    if current:
        paragraphs.append(_join_lines(current))
    return [p for p in paragraphs if p]


def extract_pdf(body: bytes, *, url: str) -> ExtractedArticle:
    """Text and metadata of a PDF document."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("pdf_encrypted", "the PDF is password-protected")
        pages = reader.pages
        page_count = len(pages)
        paragraphs: list[str] = []
        for index in range(min(page_count, MAX_PDF_PAGES)):
            paragraphs.extend(_pdf_paragraphs(pages[index].extract_text() or ""))
        meta = reader.metadata
    except ExtractionError:
        raise
    except Exception as exc:  # pypdf on hostile input can raise nearly anything
        logger.warning("pypdf failed on %s: %r", url, exc)
        raise ExtractionError("pdf_unreadable", "the PDF could not be read") from None

    paragraphs = [clean_text(p) for p in paragraphs]
    text = "\n\n".join(paragraphs)
    if not text.strip():
        raise ExtractionError(
            "pdf_no_text", "the PDF has no extractable text (it may be a scanned image)"
        )
    title = author = published = None
    if meta is not None:
        title = _short(meta.title)
        author = _short(meta.author, contract.MAX_AUTHOR)
        try:
            published = _stored_date(meta.creation_date)
        except Exception:  # a malformed date string in the document info
            published = None
    words = count_words(text)
    return ExtractedArticle(
        content_html="\n".join(f"<p>{html.escape(p, quote=False)}</p>" for p in paragraphs),
        content_text=text,
        title=title,
        author=author,
        published_date=published,
        excerpt=make_excerpt(text),
        source_domain=host_of(url) or None,
        word_count=words,
        reading_time_minutes=reading_minutes(words),
        pdf_url=url,
    )


def looks_like_pdf(body: bytes) -> bool:
    return body[:1024].lstrip().startswith(b"%PDF-")


def looks_like_html(body: bytes) -> bool:
    head = body[:2048].lstrip().lower()
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:].lstrip()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<!--")) or (
        b"<html" in head or b"<p>" in head or b"<div" in head
    )
