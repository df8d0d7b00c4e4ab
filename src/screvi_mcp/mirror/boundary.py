"""What a sync accepts from the upstream, item by item, before anything else reads a page.

The spec says every id is a UUID string. An id that is not (a path, an integer, nothing)
would be stored and then never match again (a phantom row beside a missing one), or make
the whole page unreadable and stop every later sync at it. So each item of a list answer is
checked on its own: a dictionary, a canonical UUID for its id and for the ids it holds (its
source, its tags), and the wire model's shape. An item that fails is dropped from the page
and counted by list; the rest of the page goes on as usual.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from screvi_mcp.client.client import MAX_RESPONSE_BYTES
from screvi_mcp.models import Article, Highlight, Source, TagWithCounts

_UUID = re.compile(r"\A[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")
# The lists a sync walks, by the last segment of their path.
LIST_MODELS: dict[str, type[BaseModel]] = {
    "tags": TagWithCounts,
    "sources": Source,
    "highlights": Highlight,
    "articles": Article,
}


def is_uuid(value: object) -> bool:
    return isinstance(value, str) and _UUID.match(value) is not None


def acceptable(item: object, model: type[BaseModel]) -> bool:
    """Whether one list item may be stored: ids are UUID strings, the shape is the model's."""
    if not isinstance(item, Mapping) or not is_uuid(item.get("id")):
        return False
    source = item.get("source")
    if isinstance(source, Mapping) and not is_uuid(source.get("id")):
        return False
    tags = item.get("tags")
    if isinstance(tags, list) and not all(
        isinstance(tag, Mapping) and is_uuid(tag.get("id")) for tag in tags
    ):
        return False
    try:
        model.model_validate(item)
    except ValidationError:
        return False
    return True


def screen(kind: str, payload: Any) -> tuple[Any, int]:
    """The payload without the items it may not store, and how many were dropped."""
    model = LIST_MODELS[kind]
    items = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        return payload, 0
    kept = [item for item in items if acceptable(item, model)]
    return {**payload, "data": kept}, len(items) - len(kept)


async def screened(
    request: httpx.Request, response: httpx.Response
) -> tuple[httpx.Response, str, int]:
    """A list answer with unacceptable items dropped: (response, list name, dropped)."""
    kind = request.url.path.rstrip("/").rsplit("/", 1)[-1]
    if request.method != "GET" or kind not in LIST_MODELS or response.status_code != 200:
        return response, kind, 0
    if "json" not in response.headers.get("content-type", ""):
        return response, kind, 0
    body = await _read_bounded(response)
    if len(body) > MAX_RESPONSE_BYTES:  # the client refuses it, with its own message
        return _again(request, response, body), kind, 0
    try:
        payload = json.loads(body)
    except ValueError:
        return _again(request, response, body), kind, 0
    cleaned, dropped = screen(kind, payload)
    if not dropped:
        return _again(request, response, body), kind, 0
    return _again(request, response, json.dumps(cleaned).encode()), kind, dropped


async def _read_bounded(response: httpx.Response) -> bytes:
    """At most one byte past the client's response limit: enough for it to refuse."""
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                break
    finally:
        await response.aclose()
    return b"".join(parts)


def _again(request: httpx.Request, response: httpx.Response, body: bytes) -> httpx.Response:
    """A response as read, with `body` (already decoded: no content encoding left)."""
    headers = [
        (name, value)
        for name, value in response.headers.multi_items()
        if name.lower() not in ("content-length", "content-encoding", "transfer-encoding")
    ]
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=body,
        request=request,
        extensions=response.extensions,
    )
