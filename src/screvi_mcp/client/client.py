"""`ScreviClient`: one async method per endpoint of the Screvi public API.

The client speaks HTTP through whatever transport it was given: httpx's own network pool for
the hosted API, or any `httpx.AsyncBaseTransport` (such as the embedded library's in-process
one, which `screvi_mcp.local.api.seam` hands out). It never knows which backend it talks to.
"""

from __future__ import annotations

import json
import logging
import math
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self, TypeVar

import anyio
import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from screvi_mcp import __version__, contract
from screvi_mcp.client import deadline
from screvi_mcp.client import params as p
from screvi_mcp.client.errors import (
    InvalidParameterError,
    LegacyKeyReadOnlyError,
    PayloadTooLargeError,
    RateLimitedError,
    ScreviConnectionError,
    ScreviTimeoutError,
    UnexpectedResponseError,
    error_from_response,
)
from screvi_mcp.client.in_process import (
    AnswersInProcess,
    InProcessAnswer,
    InProcessResponse,
    in_process_handler,
    json_body,
    query_string,
)
from screvi_mcp.client.inputs import NewHighlight, new_highlight
from screvi_mcp.client.params import UNSET, Unset
from screvi_mcp.client.ratelimit import (
    DEFAULT_MAX_RATE_WAIT,
    DEFAULT_RATE_PER_MINUTE,
    RateLimiter,
    RateLimitWaitTooLong,
    shared_limiter,
)
from screvi_mcp.client.results import CreatedTag, SourceWithHighlightsPage
from screvi_mcp.client.retry import (
    NEVER_SENT,
    SAFE_METHODS,
    RetryPolicy,
    may_resend_after_error,
    may_resend_after_status,
    parse_retry_after,
)
from screvi_mcp.client.skill import (
    SKILL_PATHS,
    SkillFile,
    SkillFileUnavailable,
    load_bundled_skill,
    root_url,
)
from screvi_mcp.contract import HOSTED_BASE_URL, SCOPED_KEY_PREFIX
from screvi_mcp.models import (
    EMBEDDING_BACKLOG_HEADER,
    KEYWORD_ONLY_HEADER,
    Article,
    ArticleWithContent,
    Highlight,
    Page,
    SavedArticle,
    SearchPage,
    SearchResult,
    Source,
    Tag,
    TagWithCounts,
)

logger = logging.getLogger("screvi_mcp.client")

DEFAULT_BASE_URL: Final = HOSTED_BASE_URL
DEFAULT_TIMEOUT: Final = httpx.Timeout(30.0, connect=10.0)
# The largest answer read, in bytes (decoded). The largest valid one, a source page of 100
# highlights at their 40,000-character maximum, is under 24 MB; past this cap the answer is
# dropped unread rather than held in memory (a broken or hostile upstream sent 64 MB).
MAX_RESPONSE_BYTES: Final = 32 * 1024 * 1024

ItemT = TypeVar("ItemT", bound=BaseModel)
ModelT = TypeVar("ModelT", bound=BaseModel)
T = TypeVar("T")

_NO_BODY: Final = object()
# Sent when only an article's body is wanted; see contract.OMIT_HIGHLIGHTS_PREFERENCE.
_OMIT_HIGHLIGHTS: Final = {"Prefer": contract.OMIT_HIGHLIGHTS_PREFERENCE}
_TAG_LIST = TypeAdapter(list[Tag])
_HIGHLIGHT_LIST = TypeAdapter(list[Highlight])
_TAGS_WITH_COUNTS = TypeAdapter(list[TagWithCounts])


def mask_key(api_key: str | None) -> str:
    """What may be shown of a key: its kind, never a character of the secret part."""
    if not api_key:
        return "none"
    if api_key.startswith(SCOPED_KEY_PREFIX):
        return SCOPED_KEY_PREFIX + "***"
    return "legacy-***"


class _ApiKeyAuth(httpx.Auth):
    """Adds `X-API-Key` per request, so the key never sits in the client's default headers."""

    def __init__(self, api_key: str) -> None:
        self._api_key = api_key

    def auth_flow(self, request: httpx.Request) -> Any:
        request.headers["X-API-Key"] = self._api_key
        yield request

    def __repr__(self) -> str:
        return f"_ApiKeyAuth({mask_key(self._api_key)})"


class _Borrowed(httpx.AsyncBaseTransport):
    """Another client's transport, used but not owned: closing it leaves the owner's open."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._transport.handle_async_request(request)

    async def handle_in_process(
        self, method: str, url: str, query: str, pairs: list[tuple[str, str]], body: bytes
    ) -> InProcessAnswer:
        handler = in_process_handler(self._transport)
        return None if handler is None else await handler(method, url, query, pairs, body)

    async def aclose(self) -> None:
        pass


class ScreviClient:
    """Async client of the Screvi public API; create one and reuse it for the process's life.

    Build it with `ScreviClient.hosted(api_key)` for the hosted API, or with a key, a
    `base_url` and the `transport` of another backend; use it as `async with client:` (or
    call `await client.aclose()`). Closing the client closes its transport.

    Errors are the classes of `screvi_mcp.client.errors`. Writes with a legacy key (no
    `sk_live_` prefix) fail before sending. Requests are spread under `rate_limit` per
    `rate_window` seconds for every client of the process sharing the key, and retried as
    `retry` allows (see `screvi_mcp.client.retry` for which requests are ever resent).
    """

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
        self._auth = _ApiKeyAuth(api_key) if api_key else None
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
        if rate_limiter is not None:
            self._limiter: RateLimiter | None = rate_limiter
        elif rate_limit is None:
            self._limiter = None
        else:
            self._limiter = shared_limiter(api_key, self.base_url, rate_limit, rate_window)
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/",
            timeout=timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout),
            limits=limits,
            headers={"User-Agent": self._user_agent, "Accept": "application/json"},
            transport=transport,
            follow_redirects=False,
        )
        self._deprecation_logged = False

    # Construction ------------------------------------------------------------------------

    @classmethod
    def hosted(
        cls, api_key: str, *, base_url: str = DEFAULT_BASE_URL, **options: Any
    ) -> ScreviClient:
        """A client of the hosted API (or of any server speaking the spec at `base_url`)."""
        return cls(api_key, base_url=base_url, **options)

    def with_api_key(self, api_key: str) -> ScreviClient:
        """A client for the same API that sends another key: one remote caller's own key.

        It borrows this client's transport, so for the embedded library it talks to the app
        this client already runs (no second library, index or worker); for the hosted API it
        reuses this client's connection pool. Closing it leaves that transport open for its
        owner. Its rate limit is the one every client of the
        process using that key shares.
        """
        rate_limit, rate_window = self._rate
        return ScreviClient(
            api_key,
            base_url=self.base_url,
            timeout=self._timeout,
            rate_limit=rate_limit,
            rate_window=rate_window,
            max_rate_wait=self._max_rate_wait,
            max_response_bytes=self._max_response_bytes,
            retry=self._retry,
            transport=_Borrowed(self._transport),
            bundled_skill_path=self._bundled_skill_path,
        )

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
        return f"ScreviClient(base_url={self.base_url!r}, api_key={mask_key(self._api_key)})"

    @property
    def read_only(self) -> bool:
        """True for a legacy key (no `sk_live_` prefix): the API refuses all its writes.

        A scoped key without the write scope is only found out by the server's 403.
        """
        return self._api_key is not None and not self._api_key.startswith(SCOPED_KEY_PREFIX)

    # Transport -----------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json_body: Any = _NO_BODY,
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
        left = deadline.remaining()
        if left is None:
            return await self._send(method, path, params, json_body, headers, None, [])
        sent: list[bool] = []  # whether a request left, for what the agent is told on timeout
        # What `anyio.fail_after` does, at half its cost (it is paid on every call): a scope
        # that cancels itself at the deadline, and so is only left early by running out.
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + left):
                return await self._send(method, path, params, json_body, headers, left, sent)
        except TimeoutError:
            pass
        error = ScreviTimeoutError(
            f"{method} {path} did not finish within the call's {left:.0f} s deadline"
        )
        error.method, error.path = method, path
        error.outcome_unknown = method not in SAFE_METHODS and bool(sent)
        raise error from None

    async def _send(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        json_body: Any,
        headers: Mapping[str, str] | None,
        left: float | None,
        sent: list[bool],
    ) -> httpx.Response:
        """The attempts of one call: limiter, request, and the resends `retry.py` allows."""
        max_rate_wait = self._max_rate_wait
        if left is not None:
            max_rate_wait = left if max_rate_wait is None else min(max_rate_wait, left)
        waited = 0.0
        retries = 0
        while True:
            if self._limiter is not None:
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
            sent.append(True)
            try:
                response = await self._exchange(method, path, params, json_body, headers)
            except httpx.TransportError as exc:
                resend = retries < self._retry.max_retries and may_resend_after_error(method, exc)
                delay = self._retry.backoff(retries + 1, self._rng)
                if resend and waited + delay <= self._retry.max_total_wait:
                    logger.info(
                        "%s %s failed (%s); retrying in %.2fs",
                        method,
                        path,
                        type(exc).__name__,
                        delay,
                    )
                    await self._sleep(delay)
                    waited += delay
                    retries += 1
                    continue
                error = self._transport_error(method, path, exc)
                error.outcome_unknown = method not in SAFE_METHODS and not isinstance(
                    exc, NEVER_SENT
                )
                raise error from exc

            self._note_deprecation(response)
            if response.is_success:
                logger.debug("%s %s -> %s", method, path, response.status_code)
                return response

            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            if retries < self._retry.max_retries and may_resend_after_status(
                method, response.status_code
            ):
                delay = (
                    retry_after
                    if retry_after is not None
                    else self._retry.backoff(retries + 1, self._rng)
                )
                if waited + delay <= self._retry.max_total_wait:
                    logger.info(
                        "%s %s -> HTTP %s; retrying in %.2fs",
                        method,
                        path,
                        response.status_code,
                        delay,
                    )
                    await self._sleep(delay)
                    waited += delay
                    retries += 1
                    continue
            api_error = error_from_response(response, retry_after=retry_after, secret=self._api_key)
            api_error.method, api_error.path = method, path
            # A 5xx (or an unreadable answer from a proxy) after a write reached the server:
            # the write may have been done. 429 and the other 4xx are refusals.
            api_error.outcome_unknown = (
                method not in SAFE_METHODS
                and (response.status_code >= 500 or isinstance(api_error, UnexpectedResponseError))
                and response.status_code != 429
                # The embedded library's lock wait ran out before anything was written.
                and not (response.status_code == 503 and api_error.code == "busy")
            )
            raise api_error

    async def _exchange(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: Any,
        headers: Mapping[str, str] | None,
    ) -> httpx.Response:
        """One request and its answer, read whole (within `max_response_bytes`)."""
        if self._in_process is not None:
            answered = await self._answer_in_process(method, path, params, body, headers)
            if answered is not None:
                return answered
        request = self._http.build_request(
            method, path, params=params, json=None if body is _NO_BODY else body, headers=headers
        )
        response = await self._http.send(request, auth=self._auth, stream=True)
        try:
            await self._read_bounded(response, path)
        finally:
            await response.aclose()
        return response

    async def _answer_in_process(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: Any,
        headers: Mapping[str, str] | None,
    ) -> httpx.Response | None:
        """The request as httpx would have sent it (same URL, query, headers and body),
        answered by the transport's `handle_in_process`; None if it declines."""
        assert self._in_process is not None
        url = f"{self.base_url}/{path.lstrip('/')}"
        query = query_string(params)
        merged = {"accept": "application/json", "user-agent": self._user_agent}
        if headers:  # the request's own headers win over the defaults, as in httpx
            merged.update((name.lower(), value) for name, value in headers.items())
        pairs = list(merged.items())
        if self._api_key is not None:
            pairs.append(("x-api-key", self._api_key))
        content = b"" if body is _NO_BODY else json_body(body)
        if body is not _NO_BODY:
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

    @staticmethod
    def _json(response: httpx.Response) -> Any:
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            snippet = " ".join(response.text.split())[:200]
            error = _unreadable_answer(
                response,
                f"HTTP {response.status_code} with a body that is not JSON: {snippet}",
            )
            error.not_json = True
            raise error from None

    def _data(self, response: httpx.Response) -> Any:
        payload = self._json(response)
        if isinstance(payload, dict) and "data" in payload:
            return payload["data"]
        return payload

    def _model(self, response: httpx.Response, model: type[ModelT]) -> ModelT:
        return _validate(response, lambda: model.model_validate(self._data(response)))

    def _page(self, response: httpx.Response, item: type[ItemT]) -> Page[ItemT]:
        return _validate(response, lambda: Page[item].model_validate(self._json(response)))  # type: ignore[valid-type]

    async def _change_tags(
        self, method: str, resource: str, what: str, item_id: str, tags: Sequence[str]
    ) -> list[Tag]:
        """POST (add) or DELETE (remove) /{resource}/{id}/tags: the one tag-change contract
        highlights and articles share."""
        response = await self._request(
            method,
            f"{resource}/{p.path_id(item_id, what)}/tags",
            json_body={"tags": p.check_tags(tags)},
        )
        return self._tags(response)

    def _tags(self, response: httpx.Response) -> list[Tag]:
        data = self._data(response)
        # The envelope of the tag-list answers is not in the spec: a bare list, `{data: [...]}`
        # and `{data: {tags: [...]}}` are all read.
        if isinstance(data, dict) and "tags" in data:
            data = data["tags"]
        return _validate(response, lambda: _TAG_LIST.validate_python(data))

    async def _get(self, path: str, **query: Any) -> httpx.Response:
        return await self._request("GET", path, params=p.query(**query))

    # Highlights ----------------------------------------------------------------------------

    async def list_highlights(
        self,
        *,
        page: int = 1,
        per_page: int = 20,
        source_id: str | None = None,
        favorite: bool | None = None,
        tag_id: str | None = None,
        tag: str | None = None,
        updated_since: datetime | str | None = None,
        include_deleted: bool | None = None,
        include_metadata: bool | None = None,
    ) -> Page[Highlight]:
        """GET /highlights: most recent first; tombstones only with `include_deleted`."""
        p.check_page(page, per_page)
        response = await self._get(
            "highlights",
            page=page,
            per_page=per_page,
            source_id=source_id,
            favorite=favorite,
            tag_id=tag_id,
            tag=tag,
            updated_since=updated_since,
            include_deleted=include_deleted,
            include_metadata=include_metadata,
        )
        return self._page(response, Highlight)

    async def get_random_highlights(
        self,
        *,
        count: int | None = None,
        favorite: bool | None = None,
        types: str | Sequence[str] | None = None,
        tag: str | None = None,
        source_id: str | None = None,
    ) -> list[Highlight]:
        """GET /highlights/random. Always a list: one highlight unless `count` (max 20) is given.

        Raises `NotFoundError` when no highlight matches.
        """
        p.check_range("count", count, low=1, high=contract.MAX_RANDOM_COUNT)
        response = await self._get(
            "highlights/random",
            count=count,
            favorite=favorite,
            types=p.check_types(types),
            tag=tag,
            source_id=source_id,
        )
        data = self._data(response)
        if isinstance(data, list):
            return _validate(response, lambda: _HIGHLIGHT_LIST.validate_python(data))
        return [_validate(response, lambda: Highlight.model_validate(data))]

    async def get_highlight(
        self, highlight_id: str, *, include_metadata: bool | None = None
    ) -> Highlight:
        """GET /highlights/{id}."""
        response = await self._get(
            f"highlights/{p.path_id(highlight_id, 'highlight')}",
            include_metadata=include_metadata,
        )
        return self._model(response, Highlight)

    async def create_highlight(
        self,
        content: str,
        *,
        note: str | None = None,
        favorite: bool | None = None,
        url: str | None = None,
        location: int | None = None,
        date: datetime | str | None = None,
        source_id: str | None = None,
        article_id: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Highlight:
        """POST /highlights. Without `source_id` and `article_id` the highlight is standalone."""
        fields = {
            "content": content,
            "note": note,
            "favorite": favorite,
            "url": url,
            "location": location,
            "date": date,
            "source_id": source_id,
            "article_id": article_id,
            "tags": p.check_tags(tags),
            "metadata": dict(metadata) if metadata is not None else None,
        }
        item = new_highlight({k: v for k, v in fields.items() if v is not None})
        response = await self._request("POST", "highlights", json_body=item.to_body())
        return self._model(response, Highlight)

    async def create_highlights_bulk(
        self, highlights: Sequence[NewHighlight | Mapping[str, Any]]
    ) -> list[Highlight]:
        """POST /highlights/bulk: up to 100, all or nothing, one request of the rate budget."""
        if len(highlights) > contract.MAX_BULK:
            raise PayloadTooLargeError(
                f"at most {contract.MAX_BULK} highlights per bulk request, got {len(highlights)}",
                status=413,
                from_server=False,
            )
        items = [
            new_highlight(
                item if isinstance(item, NewHighlight) else dict(item),
                prefix=f"highlights[{index}].",
            )
            for index, item in enumerate(highlights)
        ]
        response = await self._request(
            "POST", "highlights/bulk", json_body={"highlights": [i.to_body() for i in items]}
        )
        data = self._data(response)
        if isinstance(data, dict) and "highlights" in data:
            data = data["highlights"]
        return _validate(response, lambda: _HIGHLIGHT_LIST.validate_python(data))

    async def update_highlight(
        self,
        highlight_id: str,
        *,
        content: str | Unset = UNSET,
        note: str | Unset | None = UNSET,
        favorite: bool | Unset = UNSET,
        url: str | Unset | None = UNSET,
        location: int | Unset | None = UNSET,
        date: datetime | str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
        tags: Sequence[str] | Unset = UNSET,
    ) -> Highlight:
        """PATCH /highlights/{id}: only the fields given are sent; `None` clears a field.

        `tags` replaces the whole set (`[]` removes all).
        """
        if not isinstance(location, Unset):
            p.check_range("location", location, low=0)
        payload = p.body(
            content=content,
            note=note,
            favorite=favorite,
            url=url,
            location=location,
            date=date,
            metadata=dict(metadata) if isinstance(metadata, Mapping) else metadata,
            tags=UNSET if isinstance(tags, Unset) else p.check_tags(tags),
        )
        response = await self._request(
            "PATCH", f"highlights/{p.path_id(highlight_id, 'highlight')}", json_body=payload
        )
        return self._model(response, Highlight)

    async def delete_highlight(self, highlight_id: str) -> dict[str, Any]:
        """DELETE /highlights/{id}: soft, idempotent. Returns the server's answer as is."""
        response = await self._request(
            "DELETE", f"highlights/{p.path_id(highlight_id, 'highlight')}"
        )
        return _as_dict(self._data(response))

    async def add_highlight_tags(self, highlight_id: str, tags: Sequence[str]) -> list[Tag]:
        """POST /highlights/{id}/tags. Returns the highlight's full tag list afterwards."""
        return await self._change_tags("POST", "highlights", "highlight", highlight_id, tags)

    async def remove_highlight_tags(self, highlight_id: str, tags: Sequence[str]) -> list[Tag]:
        """DELETE /highlights/{id}/tags. Returns the highlight's full tag list afterwards."""
        return await self._change_tags("DELETE", "highlights", "highlight", highlight_id, tags)

    # Search --------------------------------------------------------------------------------

    async def search(
        self,
        q: str,
        *,
        source: str | None = None,
        tag: str | None = None,
        types: str | Sequence[str] | None = None,
        favorite: bool | None = None,
        min_relevance: float | None = None,
        verify: bool | None = None,
        page: int = 1,
        per_page: int = 20,
    ) -> SearchPage:
        """GET /search: hybrid semantic and keyword search over highlights (per_page max 50).

        `keyword_only_reason` is set when the API says it matched keywords only (the
        embedded library's extension header)."""
        if not isinstance(q, str) or not q.strip():
            raise InvalidParameterError(
                "q is required", status=400, fields={"q": "required"}, from_server=False
            )
        if len(q) > contract.MAX_QUERY_CHARS:
            reason = f"at most {contract.MAX_QUERY_CHARS} characters"
            raise InvalidParameterError(
                f"q must be {reason}", status=400, fields={"q": reason}, from_server=False
            )
        p.check_range("min_relevance", min_relevance, low=0, high=1)
        p.check_page(page, per_page, contract.MAX_SEARCH_PER_PAGE)
        response = await self._get(
            "search",
            q=q,
            source=source,
            tag=tag,
            types=p.check_types(types),
            favorite=favorite,
            min_relevance=min_relevance,
            verify=verify,
            page=page,
            per_page=per_page,
        )
        found = self._page(response, SearchResult)
        reason = response.headers.get(KEYWORD_ONLY_HEADER)
        pending, lag = _backlog(response.headers.get(EMBEDDING_BACKLOG_HEADER, ""))
        return SearchPage(
            data=found.data,
            pagination=found.pagination,
            keyword_only_reason=reason,
            embedding_pending=pending,
            embedding_lag_seconds=lag,
        )

    # Sources -------------------------------------------------------------------------------

    async def list_sources(
        self,
        *,
        page: int = 1,
        per_page: int = 20,
        type: contract.SourceListType | None = None,
        search: str | None = None,
        updated_since: datetime | str | None = None,
        include_deleted: bool | None = None,
        include_empty: bool | None = None,
        include_metadata: bool | None = None,
    ) -> Page[Source]:
        """GET /sources. Articles without highlights appear only with `include_empty`."""
        p.check_page(page, per_page)
        p.check_choice("type", type, p.SOURCE_LIST_TYPES)
        response = await self._get(
            "sources",
            page=page,
            per_page=per_page,
            type=type,
            search=search,
            updated_since=updated_since,
            include_deleted=include_deleted,
            include_empty=include_empty,
            include_metadata=include_metadata,
        )
        return self._page(response, Source)

    async def get_source(
        self,
        source_id: str,
        *,
        page: int = 1,
        per_page: int = 50,
        include_metadata: bool | None = None,
    ) -> SourceWithHighlightsPage:
        """GET /sources/{id}: the source and one page of its highlights."""
        p.check_page(page, per_page)
        response = await self._get(
            f"sources/{p.path_id(source_id, 'source')}",
            page=page,
            per_page=per_page,
            include_metadata=include_metadata,
        )
        return _validate(
            response, lambda: SourceWithHighlightsPage.model_validate(self._json(response))
        )

    async def create_source(
        self,
        name: str,
        type: contract.CreatableSourceType,
        *,
        author: str | None = None,
        url: str | None = None,
        image_url: str | None = None,
        isbn: str | None = None,
        asin: str | None = None,
        note: str | None = None,
        published_date: date | str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Source:
        """POST /sources. A second `self` source raises `ConflictError` with its `source_id`."""
        p.check_choice("type", type, p.CREATABLE_SOURCE_TYPES, body=True)
        p.check_length(
            {
                "name": (name, 500),
                "author": (author, 300),
                "isbn": (isbn, 20),
                "asin": (asin, 20),
                "note": (note, 10000),
            }
        )
        payload = p.body(
            name=name,
            type=type,
            author=author,
            url=url,
            image_url=image_url,
            isbn=isbn,
            asin=asin,
            note=note,
            published_date=published_date,
            metadata=dict(metadata) if metadata is not None else None,
        )
        response = await self._request(
            "POST", "sources", json_body={k: v for k, v in payload.items() if v is not None}
        )
        return self._model(response, Source)

    async def update_source(
        self,
        source_id: str,
        *,
        name: str | Unset = UNSET,
        author: str | Unset | None = UNSET,
        url: str | Unset | None = UNSET,
        image_url: str | Unset | None = UNSET,
        origin: str | Unset | None = UNSET,
        isbn: str | Unset | None = UNSET,
        asin: str | Unset | None = UNSET,
        note: str | Unset | None = UNSET,
        published_date: date | str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
    ) -> Source:
        """PATCH /sources/{id}: only the fields given are sent; `type` cannot change."""
        payload = p.body(
            name=name,
            author=author,
            url=url,
            image_url=image_url,
            origin=origin,
            isbn=isbn,
            asin=asin,
            note=note,
            published_date=published_date,
            metadata=dict(metadata) if isinstance(metadata, Mapping) else metadata,
        )
        response = await self._request(
            "PATCH", f"sources/{p.path_id(source_id, 'source')}", json_body=payload
        )
        return self._model(response, Source)

    async def delete_source(self, source_id: str, *, cascade: bool = False) -> dict[str, Any]:
        """DELETE /sources/{id}. A source with highlights needs `cascade` (else `ConflictError`)."""
        response = await self._request(
            "DELETE",
            f"sources/{p.path_id(source_id, 'source')}",
            params=p.query(cascade=True) if cascade else None,
        )
        return _as_dict(self._data(response))

    # Articles ------------------------------------------------------------------------------

    async def list_articles(
        self,
        *,
        page: int = 1,
        per_page: int = 20,
        q: str | None = None,
        status: contract.ArticleStatusName | None = None,
        home_status: contract.HomeStatusName | None = None,
        favorite: bool | None = None,
        has_highlights: bool | None = None,
        tag: str | None = None,
        updated_since: datetime | str | None = None,
        saved_since: datetime | str | None = None,
        saved_before: datetime | str | None = None,
        include_deleted: bool | None = None,
        sort_by: contract.ArticleSortKey | None = None,
        order: contract.SortOrder | None = None,
    ) -> Page[Article]:
        """GET /articles: saved articles, newest first unless `sort_by`/`order` say otherwise."""
        p.check_page(page, per_page)
        p.check_choice("status", status, p.ARTICLE_STATUSES)
        p.check_choice("home_status", home_status, p.HOME_STATUSES)
        p.check_choice("sort_by", sort_by, p.ARTICLE_SORT_KEYS)
        p.check_choice("order", order, p.SORT_ORDERS)
        response = await self._get(
            "articles",
            page=page,
            per_page=per_page,
            q=q,
            status=status,
            home_status=home_status,
            favorite=favorite,
            has_highlights=has_highlights,
            tag=tag,
            updated_since=updated_since,
            saved_since=saved_since,
            saved_before=saved_before,
            include_deleted=include_deleted,
            sort_by=sort_by,
            order=order,
        )
        return self._page(response, Article)

    async def save_article(self, url: str, *, tags: Sequence[str] | None = None) -> SavedArticle:
        """POST /articles. `duplicate` tells an existing article; `kind == "highlight"` a post."""
        payload: dict[str, Any] = {"url": url}
        checked = p.check_tags(tags)
        if checked is not None:
            payload["tags"] = checked
        response = await self._request("POST", "articles", json_body=payload)
        return self._model(response, SavedArticle)

    async def get_article(
        self,
        article_id: str,
        *,
        format: contract.ContentFormatName | None = None,
        offset: int | None = None,
        max_chars: int | None = None,
        highlights: bool = True,
    ) -> ArticleWithContent:
        """GET /articles/{id} with its body; page long bodies with `offset` and `max_chars`.

        `content` is None until `parse_state` is `parsed` (or for good when `failed`).
        With `highlights=False` (reading the body chunk by chunk) the article's highlights
        are neither asked for nor parsed, and the answer's `highlights` is empty.
        """
        p.check_choice("format", format, p.CONTENT_FORMATS)
        p.check_range("offset", offset, low=0)
        p.check_range("max_chars", max_chars, low=contract.MIN_MAX_CHARS)
        response = await self._request(
            "GET",
            f"articles/{p.path_id(article_id, 'article')}",
            params=p.query(format=format, offset=offset, max_chars=max_chars),
            headers=None if highlights else _OMIT_HIGHLIGHTS,
        )
        if highlights:
            return self._model(response, ArticleWithContent)

        def body_only() -> ArticleWithContent:
            data = self._data(response)
            if isinstance(data, dict):
                # A server that ignored the preference sent them anyway: skip parsing them.
                data = {name: value for name, value in data.items() if name != "highlights"}
            return ArticleWithContent.model_validate(data)

        return _validate(response, body_only)

    async def update_article(
        self,
        article_id: str,
        *,
        home_status: contract.HomeStatusName | Unset = UNSET,
        favorite: bool | Unset = UNSET,
        title: str | Unset | None = UNSET,
        excerpt: str | Unset | None = UNSET,
        note: str | Unset | None = UNSET,
        tags: Sequence[str] | Unset = UNSET,
    ) -> Article:
        """PATCH /articles/{id}: only fields given are sent; `None` clears title/excerpt/note."""
        if not isinstance(home_status, Unset):
            p.check_choice("home_status", home_status, p.HOME_STATUSES, body=True)
        p.check_length(
            {
                "title": (title, 500),
                "excerpt": (excerpt, 2000),
                "note": (note, 10000),
            }
        )
        payload = p.body(
            home_status=home_status,
            favorite=favorite,
            title=title,
            excerpt=excerpt,
            note=note,
            tags=UNSET if isinstance(tags, Unset) else p.check_tags(tags),
        )
        response = await self._request(
            "PATCH", f"articles/{p.path_id(article_id, 'article')}", json_body=payload
        )
        return self._model(response, Article)

    async def add_article_tags(self, article_id: str, tags: Sequence[str]) -> list[Tag]:
        """POST /articles/{id}/tags. Returns the article's full tag list afterwards."""
        return await self._change_tags("POST", "articles", "article", article_id, tags)

    async def remove_article_tags(self, article_id: str, tags: Sequence[str]) -> list[Tag]:
        """DELETE /articles/{id}/tags. Returns the article's full tag list afterwards."""
        return await self._change_tags("DELETE", "articles", "article", article_id, tags)

    # Tags ----------------------------------------------------------------------------------

    async def list_tags(self) -> list[TagWithCounts]:
        """GET /tags: every tag with its highlight and article counts."""
        response = await self._get("tags")
        data = self._data(response)
        return _validate(response, lambda: _TAGS_WITH_COUNTS.validate_python(data))

    async def create_tag(self, name: str, *, color: str | None = None) -> CreatedTag:
        """POST /tags. An existing name (any case) returns that tag with `created=False`."""
        p.check_tag_name(name)
        payload: dict[str, Any] = {"name": name}
        if color is not None:
            payload["color"] = color
        response = await self._request("POST", "tags", json_body=payload)
        tag = self._model(response, Tag)
        return CreatedTag(**tag.model_dump(), created=response.status_code == 201)

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
        return self._model(response, Tag)

    async def delete_tag(self, tag_id: str) -> dict[str, Any]:
        """DELETE /tags/{id}: permanent, detaches the tag everywhere; the server's answer as is."""
        response = await self._request("DELETE", f"tags/{p.path_id(tag_id, 'tag')}")
        return _as_dict(self._data(response))

    # Skill file ----------------------------------------------------------------------------

    async def get_skill_file(self, *, fallback: bool = True) -> SkillFile:
        """The agent skill file from the API root (no auth), else the bundled copy.

        Not rate limited or retried: it is unauthenticated, and the bundled copy is the
        better answer than a slow one.
        """
        url = root_url(self.base_url) + SKILL_PATHS[0]
        problem: BaseException
        try:
            response = await self._http.get(url, auth=None, headers={"Accept": "text/markdown"})
        except httpx.TransportError as exc:
            problem = self._transport_error("GET", url, exc)
        else:
            if response.status_code == 200:
                return SkillFile(response.text, "api", url)
            problem = error_from_response(response, secret=self._api_key)
        if not fallback:
            raise problem
        logger.info("skill file unavailable from %s (%s); using the bundled copy", url, problem)
        try:
            return load_bundled_skill(self._bundled_skill_path)
        except SkillFileUnavailable as exc:
            raise exc from problem

    # Pagination ----------------------------------------------------------------------------

    async def iterate(
        self,
        list_method: Callable[..., Awaitable[Page[ItemT]]],
        /,
        *,
        max_items: int | None = 1000,
        per_page: int | None = None,
        **filters: Any,
    ) -> AsyncIterator[ItemT]:
        """Every item of a list endpoint, page after page, stopping after `max_items`.

        `list_method` is one of the `list_*` methods or `search`, with its filters as keyword
        arguments: `client.iterate(client.list_highlights, favorite=True, max_items=200)`.
        `max_items=None` walks everything. An item seen on an earlier page (lists shift when
        items are added while walking) is not yielded twice.
        """
        if max_items is not None and max_items < 0:
            raise ValueError("max_items must not be negative")
        if per_page is not None:
            filters["per_page"] = per_page
        seen: set[str] = set()
        yielded = 0
        page_number = filters.pop("page", 1)
        while max_items is None or yielded < max_items:
            result = await list_method(page=page_number, **filters)
            for item in result.data:
                item_id = getattr(item, "id", None)
                if isinstance(item_id, str):
                    if item_id in seen:
                        continue
                    seen.add(item_id)
                yield item
                yielded += 1
                if max_items is not None and yielded >= max_items:
                    return
            pagination = result.pagination
            if not result.data or not pagination.has_more:
                return
            if pagination.total_pages and page_number >= pagination.total_pages:
                return
            page_number += 1

    paginate = iterate


def _validate(response: httpx.Response, build: Callable[[], T]) -> T:
    """Run a model build; a body of the wrong shape becomes `UnexpectedResponseError`."""
    try:
        return build()
    except ValidationError as exc:
        raise _unreadable_answer(
            response,
            f"HTTP {response.status_code} body does not match the expected shape: "
            f"{exc.error_count()} problem(s), first: {exc.errors()[0]['msg']} at "
            f"{'.'.join(map(str, exc.errors()[0]['loc']))}",
        ) from None


def _unreadable_answer(response: httpx.Response, message: str) -> UnexpectedResponseError:
    """A success answer the client cannot read. After a write it may well have been done, so
    the error says the outcome is unknown (an agent must check, not repeat)."""
    error = UnexpectedResponseError(message, status=response.status_code)
    request = response.request
    error.method = request.method
    error.path = request.url.path.split("/api/v1/", 1)[-1]
    error.outcome_unknown = request.method not in SAFE_METHODS
    return error


def _backlog(header: str) -> tuple[int | None, float | None]:
    """`pending=N; lag=S` (lag optional); (None, None) when absent or unreadable."""
    fields = dict(part.strip().partition("=")[::2] for part in header.split(";") if "=" in part)
    try:
        pending = int(fields["pending"])
        lag = float(fields["lag"]) if "lag" in fields else None
    except (KeyError, ValueError):
        return None, None
    return pending, lag


def _as_dict(data: Any) -> dict[str, Any]:
    return data if isinstance(data, dict) else {"data": data}
