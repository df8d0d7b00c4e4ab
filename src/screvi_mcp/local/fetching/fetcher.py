"""Fetching a page body from the web: bounded in time, size and redirects, behind the guard.

Redirects are followed by hand (never by httpx), one hop at a time, so that each hop's target
goes through `GuardedTransport` and counts against `max_redirects`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from screvi_mcp.local.fetching.netguard import (
    AddressPolicy,
    BlockedAddressError,
    GuardedTransport,
    Resolver,
)

logger = logging.getLogger(__name__)

DEFAULT_USER_AGENT = "Mozilla/5.0 (compatible; screvi-mcp/0.1; read-later fetcher)"
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class FetchSettings:
    """Limits of one fetch. `total_timeout` bounds a whole fetch, redirects included."""

    connect_timeout: float = 10.0
    read_timeout: float = 20.0
    total_timeout: float = 60.0
    max_bytes: int = 20 * 1024 * 1024
    max_redirects: int = 10
    # A body arriving slower than this on average, once `min_rate_grace` seconds have passed,
    # is dropped (not retried): a page that trickles bytes would otherwise hold a fetch
    # worker until `total_timeout` on every attempt.
    min_bytes_per_second: int = 2048
    min_rate_grace: float = 10.0
    # From sending the request to the end of the answer's headers. Headers trickled a byte
    # at a time reset the read timeout with each byte: without this bound a page held a
    # worker for the whole fetch on every attempt. Not retried, as a trickling body is not.
    header_timeout: float = 15.0
    # Bound of each network step POST /articles waits for (short link, social post).
    save_timeout: float = 10.0
    user_agent: str = DEFAULT_USER_AGENT
    # Hosts to treat as link shorteners in addition to the built-in list (tests, self-hosters).
    short_link_hosts: frozenset[str] = frozenset()


class FetchError(Exception):
    """A fetch that produced no usable body. `reason` is a stable code stored in parse_failure."""

    reason = "fetch_failed"
    transient = False

    def __init__(
        self,
        message: str,
        *,
        url: str,
        http_status: int | None = None,
        content_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.url = url
        self.http_status = http_status
        self.content_type = content_type


class BlockedURLError(FetchError):
    reason = "blocked_address"


class TooManyRedirectsError(FetchError):
    reason = "too_many_redirects"


class FetchTimeoutError(FetchError):
    reason = "timeout"
    transient = True


class ConnectionFailedError(FetchError):
    reason = "connection_error"
    transient = True


class BodyTooLargeError(FetchError):
    reason = "too_large"


class TooSlowError(FetchError):
    reason = "too_slow"


class HTTPStatusError(FetchError):
    reason = "http_error"

    @property
    def transient(self) -> bool:  # type: ignore[override]
        return self.http_status is not None and (
            self.http_status >= 500 or self.http_status in (408, 425, 429)
        )


class BadRedirectError(FetchError):
    reason = "bad_redirect"


@dataclass(slots=True)
class FetchResult:
    """A successful (2xx) response read whole."""

    url: str  # the final URL, after redirects
    status: int
    content_type: str  # media type only, lower-cased ("" when absent)
    charset: str | None
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    redirects: list[str] = field(default_factory=list)  # the URLs redirected from, in order


def _media_type(header: str | None) -> tuple[str, str | None]:
    if not header:
        return "", None
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.strip().partition("=")
        if name.strip().lower() == "charset" and value:
            charset = value.strip().strip('"') or None
    return media.strip().lower(), charset


class Fetcher:
    """An HTTP client for untrusted URLs. Use as `async with Fetcher(...)` or call `aclose()`.

    `transport` replaces the network layer under the guard (tests serve pages from a local
    server through it); `resolver` replaces DNS. The address policy applies in every case.
    """

    def __init__(
        self,
        policy: AddressPolicy | None = None,
        settings: FetchSettings | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        self.policy = policy if policy is not None else AddressPolicy.from_env()
        self.settings = settings if settings is not None else FetchSettings()
        self._transport = GuardedTransport(self.policy, inner=transport, resolver=resolver)
        self._client = httpx.AsyncClient(
            transport=self._transport,
            follow_redirects=False,
            trust_env=False,  # an environment proxy would connect on our behalf, unchecked
            timeout=httpx.Timeout(
                self.settings.read_timeout,
                connect=self.settings.connect_timeout,
                pool=self.settings.connect_timeout,
            ),
            headers={"User-Agent": self.settings.user_agent},
        )

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(self, url: str, *, accept: str | None = None) -> FetchResult:
        """GET `url`, following redirects; the body of a 2xx answer, or a FetchError."""
        headers = {
            "Accept": accept or "text/html,application/xhtml+xml,application/pdf;q=0.9,*/*;q=0.5",
            "Accept-Language": "en;q=0.9, *;q=0.5",
        }
        try:
            async with asyncio.timeout(self.settings.total_timeout):
                return await self._fetch(url, headers)
        except TimeoutError:
            raise FetchTimeoutError(
                f"the page took longer than {self.settings.total_timeout:g} s to download",
                url=url,
            ) from None

    async def fetch_json(self, url: str) -> Any:
        """GET a JSON document (social network APIs); FetchError when it is not JSON."""
        import json

        result = await self.fetch(url, accept="application/json")
        try:
            return json.loads(result.body)
        except ValueError:
            raise FetchError(
                "the answer was not JSON", url=url, content_type=result.content_type
            ) from None

    async def resolve_redirects(self, url: str) -> str:
        """Where `url` finally leads, following at most `max_redirects` redirects.

        Reads headers only. Stops quietly at the last URL reached on a non-redirect answer,
        and raises FetchError (blocked, timeout, too many hops, ...) like `fetch`.
        """
        try:
            async with asyncio.timeout(self.settings.total_timeout):
                current = url
                for _hop in range(self.settings.max_redirects + 1):
                    async with self._stream(current, {"Accept": "*/*"}) as response:
                        target = self._redirect_target(response, current)
                    if target is None:
                        return current
                    current = target
        except TimeoutError:
            raise FetchTimeoutError("resolving the link timed out", url=url) from None
        raise TooManyRedirectsError(f"more than {self.settings.max_redirects} redirects", url=url)

    def _stream(self, url: str, headers: dict[str, str]) -> _GuardedStream:
        return _GuardedStream(self._client, url, headers, self.settings.header_timeout)

    def _redirect_target(self, response: httpx.Response, current: str) -> str | None:
        if response.status_code not in _REDIRECT_CODES:
            return None
        location = response.headers.get("Location")
        if not location:
            return None
        try:
            target = httpx.URL(current).join(location)
        except (httpx.InvalidURL, ValueError):
            raise BadRedirectError(
                f"invalid redirect location {location!r}",
                url=current,
                http_status=response.status_code,
            ) from None
        if target.scheme not in ("http", "https"):
            raise BadRedirectError(
                f"redirect to a non-http URL ({target.scheme}:)",
                url=current,
                http_status=response.status_code,
            )
        return str(target.copy_with(fragment=None))

    async def _fetch(self, url: str, headers: dict[str, str]) -> FetchResult:
        current = url
        redirects: list[str] = []
        while True:
            async with self._stream(current, headers) as response:
                target = self._redirect_target(response, current)
                if target is None:
                    return await self._read(response, current, redirects)
            if len(redirects) >= self.settings.max_redirects:
                raise TooManyRedirectsError(
                    f"more than {self.settings.max_redirects} redirects", url=url
                )
            redirects.append(current)
            current = target

    async def _read(self, response: httpx.Response, url: str, redirects: list[str]) -> FetchResult:
        content_type, charset = _media_type(response.headers.get("Content-Type"))
        status = response.status_code

        def failure(kind: type[FetchError], message: str) -> FetchError:
            return kind(message, url=url, http_status=status, content_type=content_type or None)

        if not 200 <= status < 300:
            reason = f" {response.reason_phrase}" if response.reason_phrase else ""
            raise failure(HTTPStatusError, f"the server answered HTTP {status}{reason}")
        limit = self.settings.max_bytes
        declared = response.headers.get("Content-Length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            raise failure(
                BodyTooLargeError,
                f"the page is larger than the {limit} byte limit ({int(declared)} bytes declared)",
            )
        try:
            body = await self._body(response, failure)
        except httpx.TimeoutException:
            raise failure(
                FetchTimeoutError, "the server stopped sending the page (read timed out)"
            ) from None
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise failure(ConnectionFailedError, f"the download broke off: {exc}") from None
        return FetchResult(
            url=url,
            status=status,
            content_type=content_type,
            charset=charset,
            body=body,
            headers={name.lower(): value for name, value in response.headers.items()},
            redirects=redirects,
        )

    async def _body(
        self, response: httpx.Response, failure: Callable[[type[FetchError], str], FetchError]
    ) -> bytes:
        """The body within the size limit and the minimum rate. Decoded bytes are counted, so
        a compressed bomb is stopped at the limit too."""
        limit, min_rate = self.settings.max_bytes, self.settings.min_bytes_per_second
        chunks: list[bytes] = []
        size = 0
        started = time.monotonic()
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise failure(BodyTooLargeError, f"the page is larger than the {limit} byte limit")
            chunks.append(chunk)
            elapsed = time.monotonic() - started
            if elapsed > self.settings.min_rate_grace and size < min_rate * elapsed:
                raise failure(
                    TooSlowError,
                    f"the page arrived at {size / elapsed:.0f} bytes/s, below the minimum "
                    f"of {min_rate} bytes/s",
                )
        return b"".join(chunks)


class _GuardedStream:
    """`client.stream(GET)` with transport exceptions turned into FetchErrors."""

    def __init__(
        self, client: httpx.AsyncClient, url: str, headers: dict[str, str], header_timeout: float
    ) -> None:
        self._client = client
        self._url = url
        self._headers = headers
        self._header_timeout = header_timeout
        self._response: httpx.Response | None = None

    async def __aenter__(self) -> httpx.Response:
        try:
            request = self._client.build_request("GET", self._url, headers=self._headers)
        except (httpx.InvalidURL, ValueError) as exc:
            raise FetchError(f"invalid URL: {exc}", url=self._url) from None
        try:
            async with asyncio.timeout(self._header_timeout):
                self._response = await self._client.send(request, stream=True)
        except TimeoutError:
            raise TooSlowError(
                f"the server took more than {self._header_timeout:g} s to send its headers",
                url=self._url,
            ) from None
        except BlockedAddressError as exc:
            raise BlockedURLError(str(exc), url=self._url) from None
        except httpx.TimeoutException:
            raise FetchTimeoutError("the server did not answer in time", url=self._url) from None
        except httpx.UnsupportedProtocol as exc:
            raise FetchError(f"unsupported URL: {exc}", url=self._url) from None
        except httpx.TransportError as exc:
            raise ConnectionFailedError(
                f"could not connect: {exc or type(exc).__name__}", url=self._url
            ) from None
        return self._response

    async def __aexit__(self, *exc: object) -> None:
        if self._response is not None:
            await self._response.aclose()
