"""Prompts users reach for: answer from my library, review a topic, digest my reading list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from mcp.server import MCPServer
from pydantic import Field

# Each prompt once: its function and how it is listed (name, title, description).
PROMPTS: list[tuple[Callable[..., str], tuple[str, str, str]]] = []


def _prompt(
    name: str, title: str, description: str
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    def declared(function: Callable[..., str]) -> Callable[..., str]:
        PROMPTS.append((function, (name, title, description)))
        return function

    return declared


def register(mcp: MCPServer) -> None:
    for function, (name, title, description) in PROMPTS:
        mcp.prompt(name=name, title=title, description=description)(function)


@_prompt(
    name="answer_from_library",
    title="Answer from my library",
    description="Answer a question using only the user's highlights, with citations.",
)
def answer_from_library(
    question: Annotated[str, Field(description="the question to answer")],
) -> str:
    return (
        f"Answer this question from my Screvi library: {question}\n\n"
        "1. Call search_highlights with the question (and, if results are thin, with "
        "two or three rephrasings or key terms; lower min_relevance to 0.5 if needed).\n"
        "2. For promising hits, read the surrounding highlights with get_source, or the "
        "article itself with read_article.\n"
        "3. Answer only from what you found. Cite each claim as (Source — Author) and "
        "quote the highlight briefly. Say plainly what the library does not cover.\n"
    )


@_prompt(
    name="review_topic",
    title="Review my highlights on a topic",
    description="Gather, group and summarise what the user has highlighted on a topic.",
)
def review_topic(
    topic: Annotated[str, Field(description="the topic to review")],
    since: Annotated[
        str | None, Field(description="only highlights since this date (YYYY-MM-DD)")
    ] = None,
) -> str:
    window = f" made since {since}" if since else ""
    return (
        f"Review my highlights{window} about: {topic}\n\n"
        "Search with search_highlights (try the topic and a few related phrasings; page "
        "through results while they stay relevant). Group what you find into 3–6 themes; "
        "for each, give the key ideas in a sentence or two and quote the best highlight "
        "with its source. End with the open questions or tensions between sources, and "
        "offer to tag the highlights you used (add_highlight_tags)."
    )


@_prompt(
    name="daily_review",
    title="Run my daily review",
    description="Go through today's review one highlight at a time, recording reactions.",
)
def daily_review() -> str:
    return (
        "Run my daily review of highlights. Call get_daily_review. Show me one highlight "
        "at a time (quote it, with its source) and ask what it means to me now. From my "
        "reaction, choose an answer — again (forgot it or it felt new), hard, good, easy "
        "(obvious), or discard if I say never to show it again — tell me which, and call "
        "record_review with its highlight_id; it returns the next one. If I want to, tag, "
        "annotate or favourite a highlight with its id (add_highlight_tags, "
        "update_highlight). At the end, say when the next reviews are due."
    )


@_prompt(
    name="triage_reading_list",
    title="Triage my reading list",
    description="Go through unread saved articles and suggest what to read, defer or archive.",
)
def triage_reading_list(
    limit: Annotated[int, Field(ge=1, le=50, description="how many articles")] = 10,
) -> str:
    return (
        f"Help me triage my reading list. Call list_articles with home_status=inbox and "
        f"per_page={limit}. For each article give one line: what it is about (read its "
        "first chunk with read_article if the title is unclear) and a suggestion — read "
        "now, later, or archive. Ask before moving anything; then apply my choices with "
        "update_article (home_status)."
    )
