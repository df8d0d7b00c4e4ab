"""Exceptions of the Screvi client: one class per error `code` of the spec (section 7).

Callers branch on the class (or on `.code`), never on message text: the server may reword
`error` at any time. Errors the client detects before sending (a bound the spec sets, a write
with a read-only legacy key) use the same classes and status the server would have answered
with, and have `from_server=False`, so one `except` covers both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx


class ScreviError(Exception):
    """Anything the client raises: an API error or a failure to reach the API.

    `method` and `path` name the request that failed (set by the client when it sent one).
    `outcome_unknown` is True when the request may or may not have taken effect: a write that
    timed out, was cut off or got a 5xx after reaching the server. Repeating such a write may
    duplicate it, so callers must check what it would have changed before trying again.
    """

    method: str | None = None
    path: str | None = None
    outcome_unknown: bool = False


class ScreviAPIError(ScreviError):
    """The API answered with an error status (or with a body the client cannot read)."""

    default_code: str = "unknown_error"

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str | None = None,
        fields: Mapping[str, str] | None = None,
        from_server: bool = True,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code or self.default_code
        self.fields: dict[str, str] = dict(fields or {})
        self.from_server = from_server

    def __str__(self) -> str:
        text = f"{self.message} (HTTP {self.status}, code={self.code})"
        if self.fields:
            details = "; ".join(f"{name}: {reason}" for name, reason in self.fields.items())
            text += f" [{details}]"
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status}, code={self.code!r}, "
            f"message={self.message!r}, fields={self.fields!r})"
        )


class MissingApiKeyError(ScreviAPIError):
    default_code = "missing_api_key"


class InvalidApiKeyError(ScreviAPIError):
    default_code = "invalid_api_key"


class LegacyKeyReadOnlyError(ScreviAPIError):
    default_code = "legacy_key_read_only"


class InsufficientScopeError(ScreviAPIError):
    default_code = "insufficient_scope"


class SubscriptionRequiredError(ScreviAPIError):
    default_code = "subscription_required"


class NotFoundError(ScreviAPIError):
    default_code = "not_found"


class ConflictError(ScreviAPIError):
    """409. `source_id` names the existing source when a second `self` source was refused."""

    default_code = "conflict"

    def __init__(self, message: str, *, source_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.source_id = source_id


class PayloadTooLargeError(ScreviAPIError):
    default_code = "payload_too_large"


class ValidationFailedError(ScreviAPIError):
    """422: a body field was rejected; `fields` names each one (bulk: `highlights[i].field`)."""

    default_code = "validation_failed"


class InvalidParameterError(ScreviAPIError):
    """400: a query-string value was rejected; `fields` names it."""

    default_code = "invalid_parameter"


class RateLimitedError(ScreviAPIError):
    """429 that outlasted the client's retry budget. `retry_after` is in seconds, if known."""

    default_code = "rate_limited"
    # The server's limit (X-RateLimit-Limit, requests per minute), when it said.
    limit: int | None = None

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class InternalServerError(ScreviAPIError):
    default_code = "internal_error"


class UnexpectedResponseError(ScreviAPIError):
    """A response the client cannot read: a proxy's HTML page, malformed JSON, a wrong shape."""

    default_code = "unexpected_response"
    # The body was not JSON at all: not the API speaking (a Wi-Fi sign-in page, a proxy).
    not_json: bool = False


class ScreviConnectionError(ScreviError):
    """No response arrived: the connection failed or was reset."""


class ScreviTimeoutError(ScreviConnectionError):
    """No response arrived in time."""


ERRORS_BY_CODE: dict[str, type[ScreviAPIError]] = {
    cls.default_code: cls
    for cls in (
        MissingApiKeyError,
        InvalidApiKeyError,
        LegacyKeyReadOnlyError,
        InsufficientScopeError,
        SubscriptionRequiredError,
        NotFoundError,
        ConflictError,
        PayloadTooLargeError,
        ValidationFailedError,
        InvalidParameterError,
        RateLimitedError,
        InternalServerError,
    )
}

# When the body carries no usable code (a proxy's page, an unknown code), the status alone
# still says which class the caller expects where the spec gives that status one meaning.
_CLASS_BY_STATUS: dict[int, type[ScreviAPIError]] = {
    400: InvalidParameterError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: ValidationFailedError,
    429: RateLimitedError,
    500: InternalServerError,
}

_SNIPPET_CHARS = 200
# Bounds on what of an error body is kept (and so shown to an agent).
_MESSAGE_CHARS = 500
_FIELD_CHARS = 200
_CODE_CHARS = 100
_MAX_FIELDS = 20


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET_CHARS else flat[:_SNIPPET_CHARS] + "…"


def error_from_response(
    response: httpx.Response, *, retry_after: float | None = None, secret: str | None = None
) -> ScreviAPIError:
    """Build the exception for an error response.

    `secret` is scrubbed from every text taken from the body, in case a server or proxy
    echoes the key back.
    """

    error = _error_from_response(response, retry_after=retry_after, secret=secret)
    if isinstance(error, RateLimitedError):
        limit = response.headers.get("X-RateLimit-Limit", "").strip()
        error.limit = int(limit) if limit.isdigit() else None
    return error


def _error_from_response(
    response: httpx.Response, *, retry_after: float | None, secret: str | None
) -> ScreviAPIError:
    def scrub(text: str) -> str:
        return text.replace(secret, "***") if secret else text

    status = response.status_code
    body: Any
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None

    if not isinstance(body, dict) or not isinstance(body.get("code"), str):
        cls = _CLASS_BY_STATUS.get(status, UnexpectedResponseError)
        content_type = response.headers.get("content-type", "unknown type")
        text = _snippet(scrub(response.text)) if response.content else "empty body"
        message = f"HTTP {status} with an unreadable error body ({content_type}): {text}"
        code = cls.default_code if cls is not UnexpectedResponseError else None
        error = _build(cls, message, status=status, code=code, retry_after=retry_after)
        if isinstance(error, UnexpectedResponseError):
            error.not_json = body is None
        return error

    code = _capped(body["code"], _CODE_CHARS)
    raw_message = body.get("error")
    message = (
        _capped(scrub(raw_message), _MESSAGE_CHARS)
        if isinstance(raw_message, str)
        else f"HTTP {status}"
    )
    raw_fields = body.get("fields")
    # The server's words reach an agent: a bounded amount of them, however much it sent.
    fields = (
        {
            _capped(str(k), _CODE_CHARS): _capped(scrub(str(v)), _FIELD_CHARS)
            for k, v in list(raw_fields.items())[:_MAX_FIELDS]
        }
        if isinstance(raw_fields, dict)
        else None
    )
    cls = ERRORS_BY_CODE.get(code) or _CLASS_BY_STATUS.get(status, ScreviAPIError)
    source_id = body.get("source_id")
    return _build(
        cls,
        message,
        status=status,
        code=code,
        fields=fields,
        retry_after=retry_after,
        source_id=source_id if isinstance(source_id, str) else None,
    )


def _build(
    cls: type[ScreviAPIError],
    message: str,
    *,
    status: int,
    code: str | None,
    fields: dict[str, str] | None = None,
    retry_after: float | None = None,
    source_id: str | None = None,
) -> ScreviAPIError:
    if cls is RateLimitedError:
        return RateLimitedError(
            message, status=status, code=code, fields=fields, retry_after=retry_after
        )
    if cls is ConflictError:
        return ConflictError(message, status=status, code=code, fields=fields, source_id=source_id)
    return cls(message, status=status, code=code, fields=fields)
