"""Resources: the agent skill file, and highlights, sources and articles by id."""

from __future__ import annotations

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError

from screvi_mcp import contract
from screvi_mcp.client import ScreviError, SkillFileUnavailable
from screvi_mcp.server import render
from screvi_mcp.server.backend import Backend
from screvi_mcp.server.errors import resource_errors

# How much of an article's text the article resource shows (its description says so).
ARTICLE_RESOURCE_CHARS = 20_000

SKILL_URI = "screvi://skill.md"
REVIEW_URI = "screvi://review/today"


def register(mcp: MCPServer, backend: Backend) -> None:
    _register_fixed(mcp, backend)
    _register_by_id(mcp, backend)


def _register_fixed(mcp: MCPServer, backend: Backend) -> None:
    """The resources at fixed addresses, answered with the server's own key."""

    @mcp.resource(
        SKILL_URI,
        name="screvi-skill",
        title="Screvi agent skill",
        description="How to work with a Screvi library: search then read, chunked reading, "
        "tagging, rate limits. Fetched from the API root, else the bundled copy.",
        mime_type="text/markdown",
    )
    async def skill_file() -> str:
        # The skill file needs no key, so the shared client serves every caller.
        try:
            client = await backend.shared_client()
            skill = await client.get_skill_file()
        except (SkillFileUnavailable, ScreviError) as error:
            raise ResourceError("The skill file is unavailable") from error
        return skill.content

    @mcp.resource(
        REVIEW_URI,
        name="daily-review-status",
        title="Daily review status",
        description="How much of today's review is done, how many cards are due, and when "
        "the next are.",
        mime_type="text/plain",
    )
    async def review_status() -> str:
        from screvi_mcp.review.render import status_text
        from screvi_mcp.server.tools.review import daily_review

        # A static resource gets no request context: the server's own key's review.
        async with resource_errors("The review"):
            client = await backend.shared_client()
            today = await daily_review(backend, None, client).today(fetch=0)
        return status_text(today)


def _register_by_id(mcp: MCPServer, backend: Backend) -> None:
    """Highlights, sources and articles by id, read with the caller's key."""

    @mcp.resource(
        "screvi://highlights/{highlight_id}",
        name="highlight",
        title="A highlight",
        description="One highlight in full, with its source and tags.",
        mime_type="text/plain",
    )
    async def highlight(highlight_id: str, ctx: Context) -> str:
        async with (
            resource_errors(f"Highlight {highlight_id}"),
            backend.client(ctx.headers) as client,
        ):
            item = await client.get_highlight(highlight_id, include_metadata=True)
        return render.highlight(item, "detailed")

    @mcp.resource(
        "screvi://sources/{source_id}",
        name="source",
        title="A source with its highlights",
        description=(
            f"A source (book, article, podcast, ...) and its first {contract.MAX_PER_PAGE} "
            "highlights."
        ),
        mime_type="text/plain",
    )
    async def source(source_id: str, ctx: Context) -> str:
        async with resource_errors(f"Source {source_id}"), backend.client(ctx.headers) as client:
            result = await client.get_source(source_id, per_page=contract.MAX_PER_PAGE)
        return (
            render.source(result.data, "detailed")
            + "\n\n"
            + render.highlights(result.data.highlights, result.pagination, "detailed")
        )

    @mcp.resource(
        "screvi://articles/{article_id}",
        name="article",
        title="A saved article",
        description=(
            f"A saved article's details and the first {ARTICLE_RESOURCE_CHARS:,} characters "
            "of its text."
        ),
        mime_type="text/plain",
    )
    async def article(article_id: str, ctx: Context) -> str:
        async with (
            resource_errors(f"Article {article_id}"),
            backend.client(ctx.headers) as client,
        ):
            item = await client.get_article(
                article_id, format="text", max_chars=ARTICLE_RESOURCE_CHARS, highlights=False
            )
        return render.article_chunk(item)
