"""Return types of client methods that have no wire model of their own in `screvi_mcp.models`."""

from __future__ import annotations

from screvi_mcp.models import Pagination, SourceWithHighlights, Tag, WireModel


class SourceWithHighlightsPage(WireModel):
    """GET /sources/{id}: the source with one page of its highlights, and that page's place."""

    data: SourceWithHighlights
    pagination: Pagination


class CreatedTag(Tag):
    """POST /tags: the tag, and whether it is new (201) or already existed under that name (200)."""

    created: bool = True
