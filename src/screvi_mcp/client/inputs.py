"""Request bodies the caller builds itself: the items of POST /highlights and its bulk form."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from screvi_mcp.client.errors import ValidationFailedError
from screvi_mcp.client.params import wire_value
from screvi_mcp.contract import MAX_HIGHLIGHT_TEXT, MAX_TAG_NAME


class NewHighlight(BaseModel):
    """One highlight to create, with the bounds of POST /highlights (spec, section 4)."""

    # A misspelt field would otherwise be dropped silently and the highlight made without it.
    model_config = ConfigDict(extra="forbid")

    content: str = Field(max_length=MAX_HIGHLIGHT_TEXT)
    note: str | None = Field(default=None, max_length=MAX_HIGHLIGHT_TEXT)
    favorite: bool | None = None
    url: str | None = None
    location: int | None = Field(default=None, ge=0)
    date: datetime | str | None = None
    source_id: str | None = None
    article_id: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_parent(self) -> NewHighlight:
        if self.source_id and self.article_id:
            raise ValueError("give source_id or article_id, not both")
        for tag in self.tags or ():
            if not tag.strip() or len(tag) > MAX_TAG_NAME:
                raise ValueError(f"tags must be non-empty and at most {MAX_TAG_NAME} characters")
        return self

    def to_body(self) -> dict[str, Any]:
        """The JSON object sent: fields never set are left out, so server defaults apply."""
        return {
            name: wire_value(getattr(self, name))
            for name in self.model_fields_set
            if getattr(self, name) is not None
        }


def validation_error(error: ValidationError, prefix: str = "") -> ValidationFailedError:
    """A pydantic error as the 422 the server would answer, `fields` keyed like the server's."""
    fields: dict[str, str] = {}
    for problem in error.errors():
        location = [str(part) for part in problem["loc"]]
        name = ".".join(location) if location else "body"
        message = str(problem["msg"])
        # A rule of the model's own (one parent, not both) reads as its reason alone.
        fields[prefix + name] = message.removeprefix("Value error, ")
    return ValidationFailedError("Validation failed", status=422, fields=fields, from_server=False)


def new_highlight(item: NewHighlight | dict[str, Any], prefix: str = "") -> NewHighlight:
    if isinstance(item, NewHighlight):
        return item
    try:
        return NewHighlight.model_validate(item)
    except ValidationError as exc:
        raise validation_error(exc, prefix) from None
