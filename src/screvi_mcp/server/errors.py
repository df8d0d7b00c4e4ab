"""Client failures as tool errors an agent can act on: the spec's `code`, what went wrong,
and what to do next. Nothing else leaves: no traceback, no key, no raw HTTP body.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from screvi_mcp import contract, extensions
from screvi_mcp.client import (
    ConflictError,
    InsufficientScopeError,
    InvalidApiKeyError,
    InvalidParameterError,
    LegacyKeyReadOnlyError,
    MissingApiKeyError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitedError,
    ScreviAPIError,
    ScreviConnectionError,
    ScreviError,
    ScreviTimeoutError,
    SubscriptionRequiredError,
    UnexpectedResponseError,
    ValidationFailedError,
)

log = logging.getLogger("screvi_mcp.server")


def _fields(error: ScreviAPIError) -> str:
    return "; ".join(f"{name}: {reason}" for name, reason in error.fields.items())


# How an agent finds out whether a write it is unsure about was done, by what it wrote to.
_WRITE_CHECKS: tuple[tuple[str, str], ...] = (
    ("highlights/bulk", "list_highlights (newest first) for the highlights it would have created"),
    ("highlights/", "get_highlight with that id"),
    ("highlights", "list_highlights (newest first) for the highlight it would have created"),
    ("sources/", "get_source with that id"),
    ("sources", "list_sources with search= the source's name"),
    ("articles/", "list_articles or read_article for that article"),
    ("articles", "list_articles (newest first) for the article it would have saved"),
    ("tags", "list_tags"),
)


def _unknown_outcome(error: ScreviError, what_happened: str) -> str:
    path = (error.path or "").lstrip("/")
    check = next(
        (advice for prefix, advice in _WRITE_CHECKS if path.startswith(prefix)),
        "the matching list_* or get_* tool",
    )
    return (
        f"{what_happened}, so it is unknown whether this change was made. Next: do not "
        f"simply repeat it (that may duplicate it); first check with {check}, and call "
        "again only if the change is not there."
    )


def _no_such_endpoint(error: NotFoundError) -> bool:
    """A 404 about the path itself (a base URL without /api/v1, or not Screvi at all), as
    the embedded API words it or as a server that does not speak the API's errors does."""
    return error.message.startswith("No such endpoint") or "unreadable error body" in (
        error.message
    )


def _per_minute(error: RateLimitedError) -> str:
    """The limit the server announced (X-RateLimit-Limit), not the spec's usual 100."""
    return f"{error.limit} " if error.limit else ""


# Which tool lists the ids of what a not-found target names ("Tag ML" -> list_tags).
_ID_LISTS: tuple[tuple[str, str], ...] = (
    ("Tag ", "list_tags (tag_id takes an id, not a name)"),
    ("Source ", "list_sources (search= a name) or search_highlights"),
    ("Article ", "list_articles (q= words of its title)"),
)


def _where_ids_are(target: str) -> str:
    return next(
        (tools for prefix, tools in _ID_LISTS if target.startswith(prefix)),
        "search_highlights or a list_* tool",
    )


def _not_found(error: NotFoundError, target: str | None) -> str:
    if _no_such_endpoint(error):
        return (
            "The Screvi API address answers that it has no such endpoint, so the base URL "
            "is wrong, not the id. Next: tell the user to check SCREVI_BASE_URL: it must end "
            "at the API root /api/v1 (e.g. https://api.screvi.com/api/v1)."
        )
    what = target or "The item"
    return (
        f"{what} was not found (wrong id, or deleted). Next: find the right id with "
        f"{_where_ids_are(what)}."
    )


def _conflict(error: ConflictError, target: str | None) -> str:
    # The spec's two 409s: a second `self` source (its id is returned), and deleting a
    # source that still has highlights.
    message = error.message.rstrip(".")
    if error.source_id:
        return (
            f"{message}. The existing source's id is {error.source_id}. Next: add "
            f"highlights to it (create_highlight with source_id={error.source_id}) "
            "instead of creating another."
        )
    return (
        f"{message}. Next: ask the user, then call again with cascade=true to delete "
        "its highlights too, or leave the source in place."
    )


def _invalid(error: ScreviAPIError, target: str | None) -> str:
    details = _fields(error) or error.message
    return f"Invalid arguments — {details}. Next: fix these arguments and call again."


def _rate_limited(error: RateLimitedError, target: str | None) -> str:
    wait = f"{error.retry_after:g} seconds" if error.retry_after else "a minute"
    return (
        f"Screvi's rate limit ({_per_minute(error)}requests per minute per key) is "
        f"exhausted{'' if error.from_server else ' (' + error.message + ')'}. Next: wait "
        f"{wait}, then retry; prefer bulk and paged calls."
    )


_NOT_THE_API = (
    "not the Screvi API speaking (a web page, not JSON: a Wi-Fi sign-in page, a proxy, or a "
    "wrong SCREVI_BASE_URL)"
)


def _unexpected(error: UnexpectedResponseError, target: str | None) -> str:
    if error.not_json:
        return (
            f"The answer (HTTP {error.status}) was {_NOT_THE_API}. Next: tell the user to "
            "check the network (sign in to the Wi-Fi?) and SCREVI_BASE_URL; retrying will not "
            "help until then."
        )
    return _fallback(error, target)


# Codes only the embedded library answers (extensions.py), by code.
_BY_CODE: dict[str, str] = {
    extensions.BUSY: (
        "The library was busy with another write, so nothing was written. Next: call "
        "again in a moment."
    ),
    extensions.LIBRARY_DAMAGED: (
        "The library file is damaged, so it cannot be read. Next: tell the user to stop "
        "the server, run `screvi-mcp check`, and restore the library from a backup or an "
        "export (a mirror can instead be moved aside and made anew with `screvi-mcp sync`); "
        "calling again will not help."
    ),
}


def _fallback(error: ScreviAPIError, target: str | None) -> str:
    if error.code in _BY_CODE:
        return _BY_CODE[error.code]
    if error.status >= 500:
        return "Screvi had a server error. Next: try again shortly."
    return f"{error.message}. Next: check the arguments and try again."


def _said(text: str) -> Callable[[Any, str | None], str]:
    return lambda error, target: text


# What an agent is told for each kind of refusal, first match wins (a subclass before its base).
_ADVICE: tuple[tuple[type[ScreviAPIError] | tuple[type[ScreviAPIError], ...], Any], ...] = (
    (
        LegacyKeyReadOnlyError,
        _said(
            "This server uses a legacy read-only Screvi key, so no write can succeed. Next: "
            "tell the user; writes need a scoped key (sk_live_…) created with write access."
        ),
    ),
    (
        InsufficientScopeError,
        _said(
            "The Screvi key lacks the write scope. Next: tell the user; a key with write "
            "access is needed for this. Reading still works."
        ),
    ),
    (
        (MissingApiKeyError, InvalidApiKeyError),
        _said(
            "The Screvi API key is missing, unknown or revoked. Next: tell the user to check "
            "SCREVI_API_KEY (or the X-Screvi-Api-Key header); retrying will not help."
        ),
    ),
    (
        SubscriptionRequiredError,
        _said(
            "The Screvi account has no active subscription or trial, so the API is closed. "
            "Next: tell the user; retrying will not help."
        ),
    ),
    (NotFoundError, _not_found),
    (ConflictError, _conflict),
    (
        PayloadTooLargeError,
        _said(
            f"Too many items in one call. Next: send at most {contract.MAX_BULK} per call, "
            "in several calls."
        ),
    ),
    ((ValidationFailedError, InvalidParameterError), _invalid),
    (RateLimitedError, _rate_limited),
    (UnexpectedResponseError, _unexpected),
)

# Failures with no answer from Screvi, by class: (code, what happened when a write's outcome
# is unknown, the message otherwise). A timeout is a connection error: it comes first.
_NO_ANSWER: tuple[tuple[type[ScreviError], str, str, str], ...] = (
    (
        ScreviTimeoutError,
        "timeout",
        "Screvi did not answer in time",
        "Screvi did not answer in time. Next: try the call again shortly.",
    ),
    (
        ScreviConnectionError,
        "connection_failed",
        "The connection to Screvi broke off before the answer",
        "Could not reach the Screvi API. Next: try again shortly; if it persists, the user "
        "should check the network or SCREVI_BASE_URL.",
    ),
)


def describe(error: ScreviError, target: str | None = None) -> str:
    """One message: `[code] what happened. Next: what to do.`

    A write whose outcome is unknown (it timed out, was cut off or got a server error after
    reaching Screvi) is never answered with "try again": the agent is told how to check first.
    """
    for kind, code, happened, message in _NO_ANSWER:
        if isinstance(error, kind):
            unknown = error.outcome_unknown
            return f"[{code}] " + (_unknown_outcome(error, happened) if unknown else message)
    assert isinstance(error, ScreviAPIError)
    if error.outcome_unknown:
        return f"[{error.code}] " + _unknown_outcome(error, _what_came_back(error))
    advise = next((advise for kind, advise in _ADVICE if isinstance(error, kind)), _fallback)
    return f"[{error.code}] {advise(error, target)}"


def _what_came_back(error: ScreviAPIError) -> str:
    """What happened to a write whose outcome is unknown, as the answer showed it."""
    if isinstance(error, UnexpectedResponseError) and error.not_json:
        return f"The answer (HTTP {error.status}) was {_NOT_THE_API}"
    if isinstance(error, UnexpectedResponseError):
        return f"Screvi's answer (HTTP {error.status}) could not be read"
    return f"Screvi answered with a server error (HTTP {error.status})"


@asynccontextmanager
async def tool_errors(target: str | None = None) -> AsyncIterator[None]:
    """Turn client errors raised inside into ToolErrors with the message above.

    `target` names what an id refers to ("Highlight 1234…") for not-found messages.
    """
    try:
        yield
    except ScreviError as error:
        message = describe(error, target)
        log.info("tool call failed: %s", message)
        raise ToolError(message) from None


@asynccontextmanager
async def resource_errors(target: str) -> AsyncIterator[None]:
    """The same wording for resource reads, which fail as ResourceError instead."""
    try:
        yield
    except ScreviError as error:
        raise ResourceError(describe(error, target)) from None
