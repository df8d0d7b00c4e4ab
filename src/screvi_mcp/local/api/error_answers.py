"""The error answers of the API, as exceptions the routes raise and the app renders.

Body shape is always `{error, code, fields?}` (spec, section 7); `extra` carries the few
endpoint-specific additions such as `source_id` on a 409 for a second personal-notes source.
"""

from __future__ import annotations

from typing import Any

from screvi_mcp.local.storage.ids import missing
from screvi_mcp.local.storage.store.refusals import Conflict, Invalid, NotFound, StoreError


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        fields: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields
        self.extra = extra or {}
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.message, "code": self.code}
        if self.fields:
            body["fields"] = self.fields
        body.update(self.extra)
        return body


def not_found(kind: str, ident: str) -> ApiError:
    return ApiError(404, "not_found", missing(kind, ident))


def invalid_parameter(fields: dict[str, str]) -> ApiError:
    names = ", ".join(sorted(fields))
    return ApiError(400, "invalid_parameter", f"Invalid query parameter: {names}", fields=fields)


def validation_failed(fields: dict[str, str]) -> ApiError:
    return ApiError(422, "validation_failed", "Validation failed", fields=fields)


def conflict(message: str, **extra: Any) -> ApiError:
    return ApiError(409, "conflict", message, extra=extra)


def from_store(error: StoreError) -> ApiError:
    """The spec's answer to what the store refused."""
    if isinstance(error, NotFound):
        return ApiError(404, "not_found", error.message)
    if isinstance(error, Conflict):
        return ApiError(409, "conflict", error.message, extra=error.extra)
    if isinstance(error, Invalid):
        return validation_failed(error.fields)
    return ApiError(400, "invalid_request", error.message)
