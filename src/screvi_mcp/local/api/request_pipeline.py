"""The request pipeline every API endpoint shares.

auth → subscription → rate limit → scope → body → handler (in a worker thread, because it
talks to SQLite) → JSON. Every failure becomes the spec's error body; nothing else (no
traceback, no key) ever reaches the client.
"""

from __future__ import annotations

import logging
import sqlite3
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from screvi_mcp import extensions
from screvi_mcp.local.api import auth
from screvi_mcp.local.api.bodies import require_json_object
from screvi_mcp.local.api.error_answers import ApiError, from_store
from screvi_mcp.local.api.key_rate_limit import KeyRateLimiter
from screvi_mcp.local.api.keys import ApiKey
from screvi_mcp.local.api.query_params import QueryParams
from screvi_mcp.local.storage import db
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store.refusals import StoreError

log = logging.getLogger("screvi_mcp.local")


@dataclass
class Call:
    """What a handler needs to know about one request."""

    library: Library
    params: QueryParams
    path: dict[str, str]
    body: Any
    key: ApiKey
    root_url: str
    state: Any = None  # the app's state, for handlers that need services (search, fetcher)
    # RFC 7240 `Prefer` tokens the client sent (lower case, parameters dropped).
    preferences: frozenset[str] = frozenset()


@dataclass
class Reply:
    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Call], Reply]
AsyncHandler = Callable[[Call], Awaitable[Reply]]
Endpoint = Callable[[Request], Awaitable[Response]]

# The endpoints `endpoint()` made: each answers every request itself (errors included) with
# a complete JSON response, so an in-process caller may run one without the ASGI stack.
_PIPELINE_ENDPOINTS: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


def is_pipeline_endpoint(fn: Callable[..., Any]) -> bool:
    """Whether `fn` is an endpoint of this pipeline (see `_PIPELINE_ENDPOINTS`)."""
    return fn in _PIPELINE_ENDPOINTS


def error_response(error: ApiError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        error.body(), status_code=error.status, headers={**(headers or {}), **error.headers}
    )


# The largest request body read, in bytes (why 32 MiB: extensions.py).
MAX_BODY_BYTES = extensions.MAX_BODY_BYTES


def _too_large(limit: int) -> ApiError:
    return ApiError(
        413,
        "payload_too_large",
        f"Request body larger than {limit} bytes; send fewer or smaller items per request",
    )


async def read_body(request: Request) -> bytes:
    """The request body, refused with 413 past the app's limit before it is read whole.

    A declared Content-Length over the limit is refused without reading a byte; a chunked
    body is counted as it arrives and dropped as soon as it passes the limit.
    """
    limit: int = getattr(request.app.state, "max_body_bytes", MAX_BODY_BYTES)
    declared = request.headers.get("content-length", "").strip()
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        parts.append(chunk)
    return b"".join(parts)


def root_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _check_account(state: Any) -> None:
    """The account's settings, read per request so that `screvi-mcp library ...` applies
    to a running server: the subscription, then the rate limit (unless fixed at start)."""
    auth.require_subscription(state.library)
    read_limit = getattr(state, "rate_limit_setting", None)
    if read_limit is not None:
        state.rate_limiter.per_minute = read_limit()


def preferences(request: Request) -> frozenset[str]:
    """The preference tokens of every `Prefer` header (RFC 7240: `token[=value][; param]`,
    comma-separated); unknown ones are for the handler to ignore."""
    tokens: set[str] = set()
    for header in request.headers.getlist("prefer"):
        for item in header.split(","):
            token = item.split(";", 1)[0].split("=", 1)[0].strip().lower()
            if token:
                tokens.add(token)
    return frozenset(tokens)


def _admit(
    state: Any, secret: str | None, write: bool, headers: dict[str, str], *, may_write: bool = True
) -> ApiKey:
    """Every check before the body, in the spec's order: key, account, rate, scope.

    Runs in a worker thread (the key and the settings are read from SQLite). Headers every
    answer to this request must carry go into `headers` as they become known, so that an
    error raised later still has them.
    """
    library: Library = state.library
    limiter: KeyRateLimiter = state.rate_limiter
    key = auth.identify(library, secret, may_write=may_write)
    if key.legacy:
        # Before any other check: every answer to a legacy key carries it (spec 5.4),
        # a 403 subscription_required included.
        headers["Deprecation"] = "true"
    _check_account(state)
    verdict = limiter.check(key.id)  # thread-safe: it holds its own lock
    headers.update(verdict.headers())
    if not verdict.allowed:
        raise ApiError(
            429,
            "rate_limited",
            f"Rate limit of {verdict.limit} requests per minute exceeded; "
            f"retry in {verdict.retry_after} s",
        )
    if write:
        auth.require_write(key)
    return key


# `no_wait` endpoints answer on the event loop; False sends them through a worker thread like
# the others (the benchmark's baseline for what the hop costs).
NO_WAIT_READS = True


BUSY = ApiError(
    503,
    extensions.BUSY,
    "The library is busy with another write and nothing was written; try again in a moment",
)


DAMAGED = (
    "The library file is damaged ({reason}), so it cannot be read or written; "
    "run `screvi-mcp check`, then restore the library from a backup or an export "
    "(a mirror can instead be moved aside and made anew with `screvi-mcp sync`)"
)


def _internal_error(request: Request, error: Exception, headers: dict[str, str]) -> Response:
    # The kind of failure at ERROR; the traceback only when debugging is asked for.
    log.error("internal error on %s %s: %s", request.method, request.url.path, type(error).__name__)
    log.debug("traceback", exc_info=True)
    if db.is_damage(error):
        # Not "try again": the same pages read back the same. The file's path stays out
        # (the answer may go to a remote caller); `check` names it.
        damaged = ApiError(500, extensions.LIBRARY_DAMAGED, DAMAGED.format(reason=error))
        return error_response(damaged, headers)
    return error_response(
        ApiError(500, "internal_error", "Internal server error; try again later"), headers
    )


def _would_wait(error: sqlite3.OperationalError) -> bool:
    text = str(error)
    return "locked" in text or "busy" in text


def _without_waiting(
    state: Any,
    secret: str | None,
    headers: dict[str, str],
    handler: Handler,
    call_for: Callable[[ApiKey, Any], Call],
) -> tuple[ApiKey | None, Reply | None]:
    """Admit and answer a read on the event loop, never waiting for SQLite.

    (key, reply) when answered; (key, None) when admitted but the read would have waited
    (the handler then runs in a worker thread, and the request is not counted twice by the
    rate limiter); (None, None) when the checks themselves need a worker thread: the key's
    `last_used_at` is due (a write), a lock was held, or the connection is not prepared.
    """
    library: Library = state.library
    with library.reads_without_waiting() as ready:
        if not ready:
            return None, None
        try:
            key = _admit(state, secret, False, headers, may_write=False)
        except auth.WriteNeeded:
            return None, None
        except sqlite3.OperationalError as error:
            if not _would_wait(error):
                raise
            return None, None  # nothing counted yet: the rate limit is checked last
        try:
            return key, handler(call_for(key, None))
        except sqlite3.OperationalError as error:
            if not _would_wait(error):
                raise
            return key, None


def _call_for(request: Request) -> Callable[[ApiKey, Any], Call]:
    """The `Call` of this request for an admitted key and a body. Read here, on the event
    loop, not in a worker thread: nothing of Starlette's request crosses over."""
    state = request.app.state
    params = QueryParams(request.query_params)
    path = dict(request.path_params)
    base = root_url(request)
    prefer = preferences(request)

    def call_for(key: ApiKey, payload: Any) -> Call:
        return Call(
            library=state.library,
            params=params,
            path=path,
            body=payload,
            key=key,
            root_url=base,
            state=state,
            preferences=prefer,
        )

    return call_for


@dataclass(frozen=True)
class _Route:
    """How one endpoint answers (see `endpoint`)."""

    handler: Handler | None
    write: bool
    body: bool
    async_handler: AsyncHandler | None
    no_wait: bool

    async def reply(self, request: Request, secret: str | None, headers: dict[str, str]) -> Reply:
        call_for = _call_for(request)
        if not self.body and self.handler is not None:
            return await self._checks_and_handler_together(request, secret, headers, call_for)
        state = request.app.state
        key = await anyio.to_thread.run_sync(_admit, state, secret, self.write, headers)
        payload = require_json_object(await read_body(request)) if self.body else None
        call = call_for(key, payload)
        if self.async_handler is not None:
            return await self.async_handler(call)
        assert self.handler is not None
        return await anyio.to_thread.run_sync(self.handler, call)

    async def _checks_and_handler_together(
        self,
        request: Request,
        secret: str | None,
        headers: dict[str, str],
        call_for: Callable[[ApiKey, Any], Call],
    ) -> Reply:
        """No body to read in between: one worker-thread hop, or none for `no_wait`."""
        state, handler = request.app.state, self.handler
        assert handler is not None

        def admit_and_handle() -> Reply:
            if self.no_wait:
                state.library.prepare_reads_without_waiting()
            return handler(call_for(_admit(state, secret, self.write, headers), None))

        key, answered = (
            _without_waiting(state, secret, headers, handler, call_for)
            if self.no_wait and NO_WAIT_READS
            else (None, None)
        )
        if answered is not None:
            return answered
        if key is not None:  # admitted, but the read would have waited
            return await anyio.to_thread.run_sync(handler, call_for(key, None))
        return await anyio.to_thread.run_sync(admit_and_handle)


def _failure(request: Request, error: Exception, headers: dict[str, str]) -> Response:
    """The spec's error body for whatever a request raised."""
    if isinstance(error, ApiError):
        return error_response(error, headers)
    if isinstance(error, StoreError):
        return error_response(from_store(error), headers)
    if isinstance(error, sqlite3.OperationalError) and _would_wait(error):
        # SQLite's lock wait ran out before the transaction began: nothing was written,
        # and a client may say so rather than call the outcome unknown.
        return error_response(BUSY, {**headers, "Retry-After": "1"})
    return _internal_error(request, error, headers)


def endpoint(
    handler: Handler | None = None,
    *,
    write: bool = False,
    body: bool = False,
    async_handler: AsyncHandler | None = None,
    no_wait: bool = False,
) -> Endpoint:
    """Wrap a handler into a Starlette endpoint with the shared pipeline.

    A worker-thread hop costs more than the SQLite reads it carries, so a request makes as
    few as its order allows: one for the checks and a synchronous handler together when
    there is no body to read in between, else one for the checks and one for the handler.
    A `no_wait` endpoint (a read of one row by id) makes none: it runs on the event loop
    with a connection that fails instead of waiting for a lock (`_without_waiting`).
    """
    if no_wait and (write or body or handler is None):
        raise ValueError("only a read without a body can run on the event loop")
    route = _Route(handler, write, body, async_handler, no_wait)

    async def run(request: Request) -> Response:
        headers: dict[str, str] = {}
        try:
            reply = await route.reply(request, auth.presented_key(request), headers)
            # Rendered inside the try: a body JSON cannot encode must be a JSON 500 too,
            # not the server's plain-text one.
            return JSONResponse(
                reply.body, status_code=reply.status, headers={**headers, **reply.headers}
            )
        except Exception as error:
            return _failure(request, error, headers)

    _PIPELINE_ENDPOINTS.add(run)
    return run
