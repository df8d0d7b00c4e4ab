"""Who is calling: the API key from `X-API-Key` or `Authorization: Bearer`."""

from __future__ import annotations

from starlette.requests import Request

from screvi_mcp.local.api import keys
from screvi_mcp.local.api.error_answers import ApiError
from screvi_mcp.local.storage.library import Library

SUBSCRIPTION_SETTING = "subscription_active"


def presented_key(request: Request) -> str | None:
    key = request.headers.get("x-api-key", "").strip()
    if key:
        return key
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return None


class WriteNeeded(Exception):
    """`identify(..., may_write=False)` found the key's `last_used_at` due: identify it in a
    worker thread instead (the write may wait for another writer's transaction)."""


def identify(library: Library, secret: str | None, *, may_write: bool = True) -> keys.ApiKey:
    """The caller's live key, or the spec's 401. Runs in a worker thread (it reads SQLite),
    or on the event loop with `may_write=False`."""
    if secret is None:
        raise ApiError(
            401,
            "missing_api_key",
            "No API key: send it in the X-API-Key header or as Authorization: Bearer <key>",
        )
    record = keys.find_key(library, secret)
    if record is None:
        raise ApiError(401, "invalid_api_key", "The API key is unknown or has been revoked")
    if not may_write and keys.use_is_due(record):
        raise WriteNeeded
    keys.record_use(library, record)
    return record


def require_subscription(library: Library) -> None:
    """403 subscription_required when the library's account has no active subscription."""
    if library.get_setting(SUBSCRIPTION_SETTING, "1") == "0":
        raise ApiError(
            403,
            "subscription_required",
            "This account has no active subscription or trial; the API is unavailable",
        )


def require_write(record: keys.ApiKey) -> None:
    if record.legacy:
        raise ApiError(
            403,
            "legacy_key_read_only",
            "This legacy account-wide key is read-only; create a scoped key with write access",
        )
    if "write" not in record.scopes:
        raise ApiError(
            403, "insufficient_scope", "This API key lacks the write scope needed for this call"
        )
