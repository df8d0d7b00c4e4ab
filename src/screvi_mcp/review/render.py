"""A day's review as text: for agents (concise, with the ids to act on), for the terminal,
and as a Markdown daily note."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fsrs import State

from screvi_mcp.models import Highlight
from screvi_mcp.review.daily import Entry, Recorded, Today

Format = Literal["concise", "detailed"]
CONCISE_CHARS = 400
HOW_TO_ANSWER = (
    "Answer each with record_review(highlight_id, answer): again, hard, good, easy, or "
    "discard (never show it again)."
)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def _source(highlight: Highlight) -> str:
    source = highlight.source
    if source is None:
        return "standalone note"
    return f"{source.name} by {source.author}" if source.author else source.name


def _day(moment: datetime) -> str:
    return moment.date().isoformat()


def _why(entry: Entry) -> str:
    info = entry.card
    if entry.item.kind == "new" or info is None:
        return "new"
    seen = f"seen {info.reviews}×" if info.reviews else "not yet answered"
    last = f", last {_day(info.card.last_review)}" if info.card.last_review else ""
    return f"due ({seen}{last})"


def entry_text(entry: Entry, number: int, fmt: Format = "concise") -> str:
    highlight = entry.highlight
    assert highlight is not None
    content = highlight.content if fmt == "detailed" else _clip(highlight.content, CONCISE_CHARS)
    lines = [f"{number}. “{content}” — {_source(highlight)}"]
    if highlight.note:
        lines.append(
            f"   note: {highlight.note if fmt == 'detailed' else _clip(highlight.note, 200)}"
        )
    facts = [f"highlight_id {highlight.id}", _why(entry)]
    if highlight.favorite:
        facts.append("favorite")
    if fmt == "detailed":
        if highlight.source is not None:
            facts.append(f"source_id {highlight.source.id}")
        if highlight.tags:
            facts.append("tags: " + ", ".join(tag.name for tag in highlight.tags))
        if entry.card is not None and entry.card.card.state == State.Review:
            facts.append(f"stability {entry.card.card.stability:.1f} d")
    lines.append("   " + " · ".join(facts))
    return "\n".join(lines)


def upcoming_text(today: Today) -> str:
    later = [f"{count} on {day}" for day, count in today.upcoming]
    return "Next due: " + (", ".join(later) if later else "nothing scheduled yet") + "."


def today_text(today: Today, fmt: Format = "concise", how: str = HOW_TO_ANSWER) -> str:
    left = today.left
    total = len(today.entries)
    head = f"Daily review {today.day}: {total} highlights, {today.done} done, {len(left)} left."
    if not total:
        return f"Daily review {today.day}: nothing to review (the library has no highlights)."
    beyond = today.due - sum(entry.item.kind == "due" for entry in left)
    lines = [head]
    if beyond > 0:
        lines.append(f"{beyond} more due cards wait for the next days.")
    if left:
        offset = today.done
        lines += [entry_text(entry, offset + n, fmt) for n, entry in enumerate(left, 1)]
        lines.append(how)
    else:
        lines.append("Today's review is finished.")
    lines.append(upcoming_text(today))
    return "\n".join(lines)


def recorded_text(recorded: Recorded, fmt: Format = "concise", *, next_one: bool = True) -> str:
    """What an answer did, today's progress, and (with `next_one`) the next highlight."""
    highlight, card, today = recorded.highlight, recorded.card, recorded.today
    if recorded.answer == "discard":
        what = f"Discarded {highlight.id}: it will not be shown again."
    else:
        days = max(0, (card.due.date() - (card.last_review or card.due).date()).days)
        what = (
            f"Recorded {recorded.answer} for {highlight.id}: next review on {_day(card.due)} "
            f"(in {days} day{'s' if days != 1 else ''})."
        )
    left = today.left
    progress = f"Today: {today.done} of {len(today.entries)} done."
    if not left:
        return f"{what} {progress} Today's review is finished. {upcoming_text(today)}"
    if not next_one:
        return f"{what} {progress}"
    return f"{what} {progress} Next:\n{entry_text(left[0], today.done + 1, fmt)}"


def status_text(today: Today) -> str:
    """How many are due and when the next are: the review's status resource."""
    left = today.left
    return (
        f"Daily review {today.day}: {len(today.entries)} highlights, {today.done} done, "
        f"{len(left)} left; {today.due} cards due by the end of the day. " + upcoming_text(today)
    )


def markdown(today: Today) -> str:
    """A daily note: every highlight of the day, with its answer once given."""
    lines = [f"# Daily review {today.day}", ""]
    for entry in today.entries:
        highlight = entry.highlight
        if highlight is None:
            continue
        quote = "\n".join(f"> {line}" if line else ">" for line in highlight.content.splitlines())
        lines += [quote, f"> — {_source(highlight)}", ""]
        if highlight.note:
            lines += [f"Note: {highlight.note}", ""]
        answer = entry.item.answer or "to review"
        lines += [f"*{answer}* · `{highlight.id}`", ""]
    lines.append(upcoming_text(today))
    return "\n".join(lines) + "\n"
