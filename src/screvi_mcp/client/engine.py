"""The HTTP engine every resource of the client shares: one call, its attempts, its answer.

`BaseClient` owns what is the same for every endpoint: the key (sent per request, writes with
a legacy key refused before sending), the rate limiter, the call deadline, the one retry path
(`retry.py` decides which requests are ever resent), the bounded read of an answer, and the
errors of `errors.py`. The resource modules (`highlights.py`, `sources.py`...) hold one method
per endpoint on top of it; `ScreviClient` is all of them together.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

import anyio
import httpx

from screvi_mcp import __version__, extensions
from screvi_mcp.client import answers, deadline
from screvi_mcp.client import params as p
from screvi_mcp.client.auth import ApiKeyAuth, mask_key
from screvi_mcp.client.errors import (
    LegacyKeyReadOnlyError,
    RateLimitedError,
    ScreviConnectionError,
    ScreviError,
    ScreviTimeoutError,
    UnexpectedResponseError,
    error_from_response,
)
from screvi_mcp.client.in_process import (
    AnswersInProcess,
    InProcessResponse,
    in_process_handler,
    json_body,
    query_string,
)
from screvi_mcp.client.ratelimit import (
    DEFAULT_MAX_RATE_WAIT,
    DEFAULT_RATE_PER_MINUTE,
    RateLimiter,
    RateLimitWaitTooLong,
    limiter_for,
)
from screvi_mcp.client.retry import (
    NEVER_SENT,
    SAFE_METHODS,
    RetryPolicy,
    may_resend_after_error,
    may_resend_after_status,
    parse_retry_after,
)
from screvi_mcp.contract import HOSTED_BASE_URL, SCOPED_KEY_PREFIX
from screvi_mcp.models import ItemT, Page, Tag

logger = logging.getLogger("screvi_mcp.client")

DEFAULT_BASE_URL: Final = HOSTED_BASE_URL
DEFAULT_TIMEOUT: Final = httpx.Timeout(30.0, connect=10.0)
# The largest answer read, in bytes (decoded). The largest valid one, a source page of 100
# highlights at their 40,000-character maximum, is under 24 MB; past this cap the answer is
# dropped unread rather than held in memory (a broken or hostile upstream sent 64 MB).
MAX_RESPONSE_BYTES: Final = 32 * 1024 * 1024

# "No JSON body", as distinct from a body that is JSON null.
NO_BODY: Final = object()


@dataclass(frozen=True, slots=True)
class _Call:
    """One API call as the engine sends it (every attempt sends the same)."""

    method: str
    path: str
    params: Mapping[str, str] | None
    body: Any
    headers: Mapping[str, str] | None


@dataclass
class _Failed:
    """An attempt that did not succeed: the error to raise if it is not resent."""

    error: ScreviError
    may_resend: bool
    # The server's `Retry-After` (seconds), which replaces the back-off when given.
    retry_after: float | None
    # How the retry log line names the failure ("failed (ReadError)", "-> HTTP 503").
    what: str


class BaseClient:
    """The engine of `ScreviClient` (see there for how to build and use one)."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        max_connections: int = 20,
        max_keepalive_connections: int = 10,
        rate_limit: int | None = DEFAULT_RATE_PER_MINUTE,
        rate_window: float = 60.0,
        rate_limiter: RateLimiter | None = None,
        max_rate_wait: float | None = DEFAULT_MAX_RATE_WAIT,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        bundled_skill_path: Path | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key or None
        self._auth = ApiKeyAuth(api_key) if api_key else None
        self._retry = retry or RetryPolicy()
        self._sleep = sleep or anyio.sleep
        self._rng = rng or random.Random()
        self._bundled_skill_path = bundled_skill_path
        self._timeout = timeout
        self._rate = (rate_limit, rate_window)
        # The longest one request waits at the limiter before `rate_limited` (None: no cap).
        self._max_rate_wait = max_rate_wait
        self._max_response_bytes = max_response_bytes
        limits = httpx.Limits(
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
        )
        if transport is None:
            # Our own connection pool, made here rather than by httpx so that `with_api_key`
            # clients (one per remote caller's tool call) borrow it: otherwise each of their
            # calls to hosted Screvi would open a new connection and TLS session.
            transport = httpx.AsyncHTTPTransport(limits=limits)
        # Kept so `with_api_key` can reach the same API (for the embedded library: the same
        # running app, for hosted Screvi: the same connection pool) without starting another.
        self._transport = transport
        # An in-process backend answers without HTTP messages (see `in_process.py`).
        self._in_process: AnswersInProcess | None = in_process_handler(transport)
        self._user_agent = f"screvi-mcp/{__version__}"
        # rate_limit=None: no limiter at all, even where one is given with the rest of a
        # backend's options (a served mirror, an evaluation override them that way).
        self._limiter: RateLimiter | None = None
        if rate_limit is not None:
            self._limiter = rate_limiter or limiter_for(
                transport, api_key, self.base_url, rate_limit, rate_window
            )
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/",
            timeout=timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout),
            limits=limits,
            headers={"User-Agent": self._user_agent, "Accept": "application/json"},
            transport=transport,
            follow_redirects=False,
        )
        self._deprecation_logged = False

    async def aclose(self) -> None:
        """Close the connection pool and the transport this client was given."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self.base_url!r}, api_key={mask_key(self._api_key)})"
        )

    @property
    def read_only(self) -> bool:
        """True for a legacy key (no `sk_live_` prefix): the API refuses all its writes.

        A scoped key without the write scope is only found out by the server's 403.
        """
        return self._api_key is not None and not self._api_key.startswith(SCOPED_KEY_PREFIX)

    # One call -----------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json_body: Any = NO_BODY,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one API call, with rate limiting and the retries `retry.py` allows."""
        method = method.upper()
        if method not in SAFE_METHODS and self.read_only:
            raise LegacyKeyReadOnlyError(
                "This is a legacy API key, which is read-only; create a scoped key "
                "(sk_live_...) with write access to make changes.",
                status=403,
                from_server=False,
            )
        call = _Call(method, path, params, json_body, headers)
        left = deadline.remaining()
        if left is None:
            return await self._send(call, None, [])
        sent: list[bool] = []  # whether a request left, for what the agent is told on timeout
        # What `anyio.fail_after` does, at half its cost (it is paid on every call): a scope
        # that cancels itself at the deadline, and so is only left early by running out.
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + left):
                return await self._send(call, left, sent)
        except TimeoutError:
            pass
        error = ScreviTimeoutError(
            f"{method} {path} did not finish within the call's {left:.0f} s deadline"
        )
        error.method, error.path = method, path
        error.outcome_unknown = method not in SAFE_METHODS and bool(sent)
        raise error from None

    async def _send(self, call: _Call, left: float | None, sent: list[bool]) -> httpx.Response:
        """The attempts of one call: limiter, request, and the resends `retry.py` allows.

        One path for every failure, whether no answer came (a transport error) or an error
        answer did: each attempt says whether it may be resent and after how long."""
        max_rate_wait = self._max_rate_wait
        if left is not None:
            max_rate_wait = left if max_rate_wait is None else min(max_rate_wait, left)
        waited = 0.0
        retries = 0
        while True:
            await self._acquire(max_rate_wait)
            sent.append(True)
            outcome = await self._attempt(call)
            if isinstance(outcome, httpx.Response):
                return outcome
            if outcome.may_resend and retries < self._retry.max_retries:
                delay = outcome.retry_after
                if delay is None:
                    delay = self._retry.backoff(retries + 1, self._rng)
                if waited + delay <= self._retry.max_total_wait:
                    logger.info(
                        "%s %s %s; retrying in %.2fs", call.method, call.path, outcome.what, delay
                    )
                    await self._sleep(delay)
                    waited += delay
                    retries += 1
                    continue
            raise outcome.error

    async def _acquire(self, max_rate_wait: float | None) -> None:
        """A place under the rate limit, or `rate_limited` when it is further off than that."""
        if self._limiter is None:
            return
        try:
            await self._limiter.acquire(max_rate_wait)
        except RateLimitWaitTooLong as busy:
            whose = (
                f"this caller used its share of the rate limit ({busy.used} of "
                f"{busy.share} requests a window while {busy.sessions} callers "
                "share the key)"
                if busy.over_share
                else "the rate limit is used up"
                + (" by the other callers of this key" if busy.sessions > 1 else "")
            )
            raise RateLimitedError(
                f"{whose}; the next request can go in {busy.retry_after:.0f} s",
                status=429,
                retry_after=float(math.ceil(busy.retry_after)),
                from_server=False,
            ) from None

    async def _attempt(self, call: _Call) -> httpx.Response | _Failed:
        """One request: its success answer, or what failed and whether it may be resent."""
        method, path = call.method, call.path
        try:
            response = await self._exchange(call)
        except httpx.TransportError as exc:
            error = self._transport_error(method, path, exc)
            error.outcome_unknown = method not in SAFE_METHODS and not isinstance(exc, NEVER_SENT)
            resend = may_resend_after_error(method, exc)
            return _Failed(error, resend, None, f"failed ({type(exc).__name__})")
        self._note_deprecation(response)
        if response.is_success:
            logger.debug("%s %s -> %s", method, path, response.status_code)
            return response
        status = response.status_code
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        api_error = error_from_response(response, retry_after=retry_after, secret=self._api_key)
        api_error.method, api_error.path = method, path
        # A 5xx (or an unreadable answer from a proxy) after a write reached the server:
        # the write may have been done. 429 and the other 4xx are refusals.
        api_error.outcome_unknown = (
            method not in SAFE_METHODS
            and (status >= 500 or isinstance(api_error, UnexpectedResponseError))
            and status != 429
            # The embedded library's lock wait ran out before anything was written.
            and not (status == 503 and api_error.code == extensions.BUSY)
        )
        # A damaged library file reads the same on every try.
        resend = may_resend_after_status(method, status) and (
            api_error.code != extensions.LIBRARY_DAMAGED
        )
        return _Failed(api_error, resend, retry_after, f"-> HTTP {status}")

    async def _exchange(self, call: _Call) -> httpx.Response:
        """One request and its answer, read whole (within `max_response_bytes`)."""
        if self._in_process is not None:
            answered = await self._answer_in_process(call)
            if answered is not None:
                return answered
        body = None if call.body is NO_BODY else call.body
        request = self._http.build_request(
            call.method, call.path, params=call.params, json=body, headers=call.headers
        )
        response = await self._http.send(request, auth=self._auth, stream=True)
        try:
            await self._read_bounded(response, call.path)
        finally:
            await response.aclose()
        return response

    async def _answer_in_process(self, call: _Call) -> httpx.Response | None:
        """The request as httpx would have sent it (same URL, query, headers and body),
        answered by the transport's `handle_in_process`; None if it declines."""
        assert self._in_process is not None
        method, path, body, headers = call.method, call.path, call.body, call.headers
        url = f"{self.base_url}/{path.lstrip('/')}"
        query = query_string(call.params)
        merged = {"accept": "application/json", "user-agent": self._user_agent}
        if headers:  # the request's own headers win over the defaults, as in httpx
            merged.update((name.lower(), value) for name, value in headers.items())
        pairs = list(merged.items())
        if self._api_key is not None:
            pairs.append(("x-api-key", self._api_key))
        content = b"" if body is NO_BODY else json_body(body)
        if body is not NO_BODY:
            pairs += [("content-length", str(len(content))), ("content-type", "application/json")]
        elif method in ("POST", "PUT", "PATCH"):
            pairs.append(("content-length", "0"))
        answer = await self._in_process(method, url, query, pairs, content)
        if answer is None:
            return None
        response = InProcessResponse(answer, method, f"{url}?{query}" if query else url)
        if len(response.content) > self._max_response_bytes:
            raise self._unreadable(response, path, self._too_large())
        return response

    def _too_large(self) -> str:
        return f"larger than the client's limit of {self._max_response_bytes} bytes"

    def _unreadable(self, response: httpx.Response, path: str, why: str) -> UnexpectedResponseError:
        error = UnexpectedResponseError(
            f"HTTP {response.status_code} answer {why}; it was not read",
            status=response.status_code,
        )
        method = response.request.method
        error.method, error.path = method, path
        error.outcome_unknown = method not in SAFE_METHODS
        return error

    async def _read_bounded(self, response: httpx.Response, path: str) -> None:
        """Read the body of a streamed response, refusing one past `max_response_bytes`."""
        limit = self._max_response_bytes
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > limit:
            raise self._unreadable(response, path, self._too_large())
        parts: list[bytes] = []
        size = 0
        try:
            async for part in response.aiter_bytes():  # decoded: a compressed bomb counts whole
                size += len(part)
                if size > limit:
                    raise self._unreadable(response, path, self._too_large())
                parts.append(part)
        except httpx.DecodingError:
            raise self._unreadable(
                response, path, "with a body that does not decode (bad compression)"
            ) from None
        # What `Response.aread()` does once the stream is consumed; done here to bound it.
        response._content = b"".join(parts)

    def _transport_error(
        self, method: str, path: str, exc: httpx.TransportError
    ) -> ScreviConnectionError:
        detail = str(exc) or type(exc).__name__
        if self._api_key:
            detail = detail.replace(self._api_key, "***")
        error = (
            ScreviTimeoutError(f"{method} {path} timed out: {detail}")
            if isinstance(exc, httpx.TimeoutException)
            else ScreviConnectionError(f"{method} {path} failed: {detail}")
        )
        error.method, error.path = method, path
        return error

    def _note_deprecation(self, response: httpx.Response) -> None:
        if self._deprecation_logged or "deprecation" not in response.headers:
            return
        self._deprecation_logged = True
        logger.warning(
            "The Screvi API marks this API key as deprecated (Deprecation: %s): it is a legacy "
            "account-wide key and read-only. Create a scoped key (sk_live_...) in the API "
            "settings.",
            response.headers["deprecation"],
        )

    async def _get(self, path: str, **query: Any) -> httpx.Response:
        return await self._request("GET", path, params=p.query(**query))

    async def _list_page(
        self,
        path: str,
        item: type[ItemT],
        page: int,
        per_page: int,
        query: Mapping[str, Any],
        **choices: frozenset[str],
    ) -> Page[ItemT]:
        """One page of a list endpoint: page, per_page and each choice-valued filter checked
        (`choices`: filter name -> allowed values) before the GET."""
        p.check_page(page, per_page)
        for name, allowed in choices.items():
            p.check_choice(name, query.get(name), allowed)
        response = await self._get(path, page=page, per_page=per_page, **query)
        return answers.page(response, item)

    async def _update(
        self, resource: str, what: str, item_id: str, payload: dict[str, Any], model: type[ItemT]
    ) -> ItemT:
        """PATCH /{resource}/{id} with only the fields given: the partial update every
        resource shares. Returns the updated item."""
        response = await self._request(
            "PATCH", f"{resource}/{p.path_id(item_id, what)}", json_body=payload
        )
        return answers.model(response, model)

    async def _change_tags(
        self, method: str, resource: str, what: str, item_id: str, tags: Sequence[str]
    ) -> list[Tag]:
        """POST (add) or DELETE (remove) /{resource}/{id}/tags: the one tag-change contract
        highlights and articles share. Returns the item's full tag list afterwards."""
        response = await self._request(
            method,
            f"{resource}/{p.path_id(item_id, what)}/tags",
            json_body={"tags": p.check_tags(tags)},
        )
        return answers.tags(response)
