"""The /tags endpoints: list with counts, create, rename or recolour, delete."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from screvi_mcp.client import answers
from screvi_mcp.client import params as p
from screvi_mcp.client.engine import BaseClient
from screvi_mcp.client.marks import reads, writes
from screvi_mcp.client.params import UNSET, Unset
from screvi_mcp.client.results import CreatedTag
from screvi_mcp.models import Tag, TagWithCounts

_TAGS_WITH_COUNTS = TypeAdapter(list[TagWithCounts])


class TagsResource(BaseClient):
    @reads
    async def list_tags(self) -> list[TagWithCounts]:
        """GET /tags: every tag with its highlight and article counts."""
        response = await self._get("tags")
        data = answers.data_of(response)
        return answers.validate(response, lambda: _TAGS_WITH_COUNTS.validate_python(data))

    @writes
    async def create_tag(self, name: str, *, color: str | None = None) -> CreatedTag:
        """POST /tags. An existing name (any case) returns that tag with `created=False`."""
        p.check_tag_name(name)
        payload: dict[str, Any] = {"name": name}
        if color is not None:
            payload["color"] = color
        response = await self._request("POST", "tags", json_body=payload)
        tag = answers.model(response, Tag)
        return CreatedTag(**tag.model_dump(), created=response.status_code == 201)

    @writes
    async def update_tag(
        self,
        tag_id: str,
        *,
        name: str | Unset = UNSET,
        color: str | Unset | None = UNSET,
    ) -> Tag:
        """PATCH /tags/{id}: rename or recolour; a name clash raises `ValidationFailedError`."""
        if not isinstance(name, Unset):
            p.check_tag_name(name)
        response = await self._request(
            "PATCH", f"tags/{p.path_id(tag_id, 'tag')}", json_body=p.body(name=name, color=color)
        )
        return answers.model(response, Tag)

    @writes
    async def delete_tag(self, tag_id: str) -> dict[str, Any]:
        """DELETE /tags/{id}: permanent, detaches the tag everywhere; the server's answer as is."""
        response = await self._request("DELETE", f"tags/{p.path_id(tag_id, 'tag')}")
        return answers.as_dict(response)
