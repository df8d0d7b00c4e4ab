"""Reading a success answer into the wire models; a body of the wrong shape is an error.

Every resource module reads its answers through these, so what an unreadable answer means
(after a write: the outcome is unknown, an agent must check rather than repeat) is said once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from screvi_mcp.client.errors import UnexpectedResponseError
from screvi_mcp.client.retry import SAFE_METHODS
from screvi_mcp.models import Page, Tag

ItemT = TypeVar("ItemT", bound=BaseModel)
ModelT = TypeVar("ModelT", bound=BaseModel)
T = TypeVar("T")

_TAG_LIST = TypeAdapter(list[Tag])


def validate(response: httpx.Response, build: Callable[[], T]) -> T:
    """Run a model build; a body of the wrong shape becomes `UnexpectedResponseError`."""
    try:
        return build()
    except ValidationError as exc:
        raise unreadable_answer(
            response,
            f"HTTP {response.status_code} body does not match the expected shape: "
            f"{exc.error_count()} problem(s), first: {exc.errors()[0]['msg']} at "
            f"{'.'.join(map(str, exc.errors()[0]['loc']))}",
        ) from None


def unreadable_answer(response: httpx.Response, message: str) -> UnexpectedResponseError:
    """A success answer the client cannot read. After a write it may well have been done, so
    the error says the outcome is unknown (an agent must check, not repeat)."""
    error = UnexpectedResponseError(message, status=response.status_code)
    request = response.request
    error.method = request.method
    error.path = request.url.path.split("/api/v1/", 1)[-1]
    error.outcome_unknown = request.method not in SAFE_METHODS
    return error


def json_of(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        snippet = " ".join(response.text.split())[:200]
        error = unreadable_answer(
            response,
            f"HTTP {response.status_code} with a body that is not JSON: {snippet}",
        )
        error.not_json = True
        raise error from None


def data_of(response: httpx.Response) -> Any:
    """The answer's `data`, or the whole body when it has no envelope."""
    payload = json_of(response)
    if isinstance(payload, dict) and "data" in payload:
        return payload["data"]
    return payload


def model(response: httpx.Response, model: type[ModelT]) -> ModelT:
    return validate(response, lambda: model.model_validate(data_of(response)))


def listed(response: httpx.Response, adapter: TypeAdapter[T], key: str) -> T:
    """A list answer, bare or as `{data: [...]}` or `{data: {key: [...]}}` (the tag-list and
    bulk answers' envelopes are not in the spec, so all three are read)."""
    data = data_of(response)
    if isinstance(data, dict) and key in data:
        data = data[key]
    return validate(response, lambda: adapter.validate_python(data))


def whole(response: httpx.Response, model: type[ModelT]) -> ModelT:
    """An answer read whole, its envelope too (`data` beside `pagination`)."""
    return validate(response, lambda: model.model_validate(json_of(response)))


def page(response: httpx.Response, item: type[ItemT]) -> Page[ItemT]:
    return whole(response, Page[item])  # type: ignore[valid-type]


def tags(response: httpx.Response) -> list[Tag]:
    return listed(response, _TAG_LIST, "tags")


def as_dict(response: httpx.Response) -> dict[str, Any]:
    """The server's answer as is (deletes): a dict, a bare value wrapped as `{data: ...}`."""
    data = data_of(response)
    return data if isinstance(data, dict) else {"data": data}
