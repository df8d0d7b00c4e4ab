"""Results as compact text for agents: the content, where it came from, the ids to follow up,
and nothing else. Empty fields are left out rather than printed as null; every list ends with
a plain sentence about what page this is and how to get the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal
from urllib.parse import urlsplit

from screvi_mcp.models import (
    Article,
    ArticleWithContent,
    Highlight,
    Pagination,
    SearchResult,
    Source,
    Tag,
    TagWithCounts,
)

ResponseFormat = Literal["concise", "detailed"]

# In concise lists a very long highlight is cut here; get_highlight gives the whole text.
CONCISE_CONTENT_CHARS = 600


def _date(value: object) -> str:
    text = str(value)
    return text[:10] if len(text) >= 10 else text


def tag_names(tags: Sequence[Tag]) -> str:
    return ", ".join(tag.name for tag in tags)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"… [{len(text) - limit} more chars]"


def source_line(highlight: Highlight) -> str:
    source = highlight.source
    if source is None:
        return "standalone note"
    by = f" by {source.author}" if source.author else ""
    return f"{source.name}{by} ({source.type})"


def highlight(item: Highlight, fmt: ResponseFormat = "concise", number: int | None = None) -> str:
    lead = f"{number}. " if number is not None else ""
    content = item.content if fmt == "detailed" else _clip(item.content, CONCISE_CONTENT_CHARS)
    lines = [f"{lead}“{content}”", f"   — {source_line(item)}"]
    if item.note:
        note = item.note if fmt == "detailed" else _clip(item.note, 300)
        lines.append(f"   note: {note}")
    facts = [f"id {item.id}"]
    if item.source is not None:
        facts.append(f"source_id {item.source.id}")
    if item.tags:
        facts.append(f"tags: {tag_names(item.tags)}")
    if item.favorite:
        facts.append("favorite")
    if item.deleted:
        facts.append("DELETED")
    if isinstance(item, SearchResult):
        facts.append(_match(item, fmt))
    lines.append("   " + " · ".join(facts))
    if fmt == "detailed":
        extra = []
        if item.location is not None:
            extra.append(f"location {item.location:g}")
        if item.url:
            extra.append(f"url {item.url}")
        if item.date:
            extra.append(f"highlighted {_date(item.date)}")
        if item.created_at:
            extra.append(f"created {_date(item.created_at)}")
        if item.updated_at:
            extra.append(f"updated {_date(item.updated_at)}")
        if item.source is not None and item.source.url:
            extra.append(f"source url {item.source.url}")
        if item.metadata:
            extra.append(f"metadata {item.metadata}")
        if extra:
            lines.append("   " + " · ".join(extra))
    return "\n".join(lines)


def _match(result: SearchResult, fmt: ResponseFormat) -> str:
    if fmt == "concise":
        return f"match {result.match_type.value}"
    parts = [f"match {result.match_type.value}", f"relevance {result.relevance:.4f}"]
    if result.similarity is not None:
        parts.append(f"similarity {result.similarity:.2f}")
    if result.verified_relevance is not None:
        parts.append(f"verified {result.verified_relevance:.2f}")
    return ", ".join(parts)


_SINGULAR = {"matches": "match"}


def counted(number: int, noun: str) -> str:
    """'1 highlight', '2 highlights', '1 match': `noun` is the plural."""
    if number != 1:
        return f"{number} {noun}"
    return f"1 {_SINGULAR.get(noun, noun.removesuffix('s'))}"


def page_line(pagination: Pagination, noun: str) -> str:
    """'Page 1 of 7 (134 highlights) — call again with page=2 for more.'"""
    if pagination.total == 0:
        return f"No {noun} found."
    span = f"Page {pagination.page} of {pagination.total_pages} ({counted(pagination.total, noun)})"
    if pagination.has_more:
        return f"{span} — call again with page={pagination.page + 1} for more."
    if pagination.page > pagination.total_pages:
        return (
            f"{span} — page {pagination.page} is past the end; the last page is "
            f"{pagination.total_pages}."
        )
    return f"{span}."


def highlights(
    items: Sequence[Highlight],
    pagination: Pagination | None,
    fmt: ResponseFormat = "concise",
    noun: str = "highlights",
) -> str:
    first = 1 if pagination is None else (pagination.page - 1) * pagination.per_page + 1
    blocks = [highlight(item, fmt, first + index) for index, item in enumerate(items)]
    if pagination is None:
        return "\n\n".join(blocks)
    return listing(blocks, pagination, noun)


def listing(
    blocks: Sequence[str], pagination: Pagination, noun: str, empty: str | None = None
) -> str:
    """Rendered items of one page, then the sentence saying which page and what next."""
    if pagination.total == 0:
        return empty or f"No {noun} found."
    return "\n\n".join([*blocks, page_line(pagination, noun)])


def source(item: Source, fmt: ResponseFormat = "concise") -> str:
    by = f" by {item.author}" if item.author else ""
    head = f"{item.name}{by} ({item.type}) — {counted(item.highlight_count, 'highlights')}"
    facts = [f"id {item.id}"]
    if item.tags:
        facts.append(f"tags: {tag_names(item.tags)}")
    if item.deleted:
        facts.append("DELETED")
    lines = [head, "   " + " · ".join(facts)]
    if item.note:
        lines.append(f"   note: {item.note if fmt == 'detailed' else _clip(item.note, 300)}")
    if fmt == "detailed":
        extra = [
            f"{label} {value}"
            for label, value in (
                ("url", item.url),
                ("origin", item.origin),
                ("image", item.image_url),
            )
            if value
        ]
        if item.created_at:
            extra.append(f"created {_date(item.created_at)}")
        if item.metadata:
            extra.append(f"metadata {item.metadata}")
        if extra:
            lines.append("   " + " · ".join(extra))
    return "\n".join(lines)


def sources(items: Sequence[Source], pagination: Pagination, fmt: ResponseFormat) -> str:
    return listing([source(item, fmt) for item in items], pagination, "sources")


def article(item: Article, fmt: ResponseFormat = "concise") -> str:
    title = item.title or item.url
    by = f" by {item.author}" if item.author else ""
    head = f"{title}{by}"
    facts = [f"id {item.id}", item.home_status, item.status]
    if item.parse_state.value != "parsed":
        facts.append(f"parse_state {item.parse_state.value}")
    if item.reading_time_minutes:
        facts.append(f"{item.reading_time_minutes} min read")
    if item.highlight_count:
        facts.append(counted(item.highlight_count, "highlights"))
    if item.tags:
        facts.append(f"tags: {tag_names(item.tags)}")
    if item.favorite:
        facts.append("favorite")
    lines = [head, f"   {item.url}", "   " + " · ".join(facts)]
    if fmt == "detailed":
        if item.excerpt:
            lines.append(f"   excerpt: {item.excerpt}")
        if item.note:
            lines.append(f"   note: {item.note}")
        extra = [f"saved {_date(item.saved_at)}"] if item.saved_at else []
        if item.published_date:
            extra.append(f"published {_date(item.published_date)}")
        for label, value in (
            ("site", item.site_name),
            ("language", item.language),
            ("words", item.word_count),
            ("app", web_app_link(item.screvi_url)),
        ):
            if value:
                extra.append(f"{label} {value}")
        if extra:
            lines.append("   " + " · ".join(extra))
    return "\n".join(lines)


def articles(items: Sequence[Article], pagination: Pagination, fmt: ResponseFormat) -> str:
    return listing(
        [article(item, fmt) for item in items], pagination, "articles", "No saved articles found."
    )


def tags_with_counts(items: Sequence[TagWithCounts]) -> str:
    if not items:
        return "No tags yet. Tags are created when first used (add_highlight_tags, create_tag)."
    lines = [
        f"{tag.name} — {counted(tag.highlight_count, 'highlights')}, "
        f"{counted(tag.article_count, 'articles')} "
        f"(id {tag.id}{', colour ' + tag.color if tag.color else ''})"
        for tag in items
    ]
    return "\n".join([f"{counted(len(items), 'tags')}:", *lines])


def tag_list(item_tags: Sequence[Tag], what: str) -> str:
    if not item_tags:
        return f"{what} now has no tags."
    return f"{what} now has tags: {tag_names(item_tags)}"


def article_chunk(item: ArticleWithContent) -> str:
    """One chunk of an article's body with the arithmetic needed to read on."""
    header = [article(item, "concise")]
    if item.content is None:
        state = item.parse_state.value
        if state in ("queued", "fetching"):
            advice = (
                f"The body is not extracted yet (parse_state {state}). Wait a few seconds and "
                "call read_article again."
            )
        else:
            reason = item.parse_error or "no reason recorded"
            advice = f"The body could not be extracted (parse_state {state}): {reason}."
        return "\n".join([*header, "", advice])
    end = item.content_offset + len(item.content)
    if item.content_truncated:
        position = (
            f"Characters {item.content_offset}–{end} of {item.content_length}. More remains: "
            f"call read_article with offset={end} to continue."
        )
    else:
        position = (
            f"Characters {item.content_offset}–{end} of {item.content_length}. "
            "This is the end of the article."
        )
    return "\n".join([*header, f"[{position}]", "", item.content, "", f"[{position}]"])


def web_app_link(url: str | None) -> str | None:
    """The article's link in Screvi's web app; None for the embedded library's, which has no
    web app (its `http://screvi.embedded/app/...` or loopback links lead nowhere)."""
    if not url:
        return None
    host = (urlsplit(url).hostname or "").lower()
    return url if host == "screvi.com" or host.endswith(".screvi.com") else None
