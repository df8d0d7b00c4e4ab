"""Review toolset: today's spaced-repetition review, and the reader's answers to it."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from screvi_mcp.client import ScreviClient
from screvi_mcp.review import render
from screvi_mcp.review.answers import Answer
from screvi_mcp.review.daily import MAX_SIZE, DailyReview, ReviewPlace, Settings
from screvi_mcp.server.backend import CLIENT_KEY_HEADER, Backend
from screvi_mcp.server.toolkit import Id, ToolSpec, declare, reading, writing

TOOLS: list[ToolSpec] = []
tool = declare(TOOLS, "review")

Size = Annotated[int, Field(ge=1, le=MAX_SIZE, description="highlights today (default 10)")]
ReviewFormat = Annotated[
    render.Format, Field(description="concise (default) or detailed (tags, source ids, memory)")
]


def place(backend: Backend, ctx: Context | None) -> ReviewPlace:
    """Where the review state of this call's account (a caller's own key, if sent) lives."""
    config = backend.config
    own = (ctx.headers or {}).get(CLIENT_KEY_HEADER, "").strip() if ctx else ""
    return ReviewPlace.of(
        library_path=config.library_path,
        mirror_path=config.mirror_path,
        api_key=(own or config.api_key) if config.hosted else None,
        base_url=config.base_url,
    )


def daily_review(
    backend: Backend, ctx: Context | None, client: ScreviClient, size: int | None = None
) -> DailyReview:
    settings = backend.config.review or Settings()
    if size is not None:
        settings = Settings(size, settings.new_per_day, settings.tz, settings.now)
    return DailyReview(client, place(backend, ctx), settings)


@tool(reading("Today's review"))
async def get_daily_review(
    backend: Backend, ctx: Context, size: Size | None = None, format: ReviewFormat = "concise"
) -> str:
    """Today's spaced-repetition review of the reader's highlights: due ones first, then new
    ones across sources. Resumes where the reader stopped; answer each with record_review."""
    async with backend.call(ctx) as client:
        today = await daily_review(backend, ctx, client, size).today()
    return render.today_text(today, format)


@tool(writing("Record a review answer", destructive=False, idempotent=True))
async def record_review(
    backend: Backend,
    ctx: Context,
    highlight_id: Id,
    answer: Annotated[
        Answer, Field(description="how well it was recalled; discard: never show it again")
    ],
    format: ReviewFormat = "concise",
) -> str:
    """Record the reader's answer to a reviewed highlight; reschedules it and returns the next
    one. Answering again the same day replaces the earlier answer."""
    async with backend.call(ctx, f"Highlight {highlight_id}") as client:
        recorded = await daily_review(backend, ctx, client).record(highlight_id, answer)
    return render.recorded_text(recorded, format)
