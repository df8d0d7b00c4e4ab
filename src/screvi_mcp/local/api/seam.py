"""The embedded library as an httpx transport: the API app served in-process, no socket.

`EmbeddedLibrary` owns everything the in-process app needs, the way an httpx transport owns
its connections: starting it runs the app's lifespan (which opens the library file once,
migrating it, and starts background work); closing it ends that lifespan. Once started it
also knows the library's embedded read-write key and the server's rate setting, which a
client of it needs. Whoever builds a `ScreviClient` over it hands it in as `transport=`; the
client never learns which backend it talks to.

Most requests need no HTTP machinery at all: `handle_in_process` runs the matching API
endpoint directly on a request given in parts (no httpx request or response objects, no
ASGI messages, no middleware), which a client that knows the method uses first. Anything it
does not answer (an unknown path, a wrong method, the skill file) goes through the whole app
as `handle_async_request`, so both ways answer alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import Message, Scope

from screvi_mcp.client.ratelimit import Limiters, RateLimiter
from screvi_mcp.local.api import app as app_module
from screvi_mcp.local.api.encoded_slashes import routing_path
from screvi_mcp.local.api.keys import embedded_key
from screvi_mcp.local.api.request_pipeline import Endpoint, is_pipeline_endpoint
from screvi_mcp.local.storage.library import Library

# The app is reached without a socket; the host name only has to be well formed.
EMBEDDED_BASE_URL: Final = "http://screvi.embedded/api/v1"

# What httpx's ASGI transport tells the app about the peer; the same here.
_CLIENT_ADDRESS: Final = ("127.0.0.1", 123)

_NOT_STARTED: Final = (
    "start the embedded library first: `async with EmbeddedLibrary(...)` or `await .start()`"
)


class EmbeddedLibrary(httpx.AsyncBaseTransport):
    """The embedded library's API app as an httpx transport; start it before use.

    Built over the library file at `library_path` (the app made by `create_app` with
    `rate_limit_per_minute` and `app_options`), or over a ready `app`. Requests before
    `start()` (or after `aclose()`) raise RuntimeError: without its lifespan the app has no
    library open. Each request gets a copy of the lifespan's state, as ASGI servers do.
    """

    base_url: Final = EMBEDDED_BASE_URL

    def __init__(
        self,
        library_path: Path | str | None = None,
        *,
        app: Starlette | None = None,
        rate_limit_per_minute: int | None = None,
        raise_app_exceptions: bool = False,
        **app_options: Any,
    ) -> None:
        if app is None:
            if library_path is None:
                raise TypeError("EmbeddedLibrary needs a library_path or an app")
            app = app_module.create_app(
                library_path, rate_limit_per_minute=rate_limit_per_minute, **app_options
            )
        self.app = app
        self._routes: list[BaseRoute] = list(app.router.routes)
        self._rate_setting = rate_limit_per_minute
        self._state: Mapping[str, Any] = {}
        self._asgi = httpx.ASGITransport(
            app=self._with_state, raise_app_exceptions=raise_app_exceptions
        )
        self._stack = AsyncExitStack()
        self._lock = anyio.Lock()
        self._started = False
        self._embedded_key: str | None = None
        # Every library answers at one pseudo-URL, and a copied file keeps its keys: the
        # process-wide limiters by (key, URL) would make copies share one limit per key.
        # Each library is its own API, with its own limiters (ratelimit.limiter_for).
        self._limiters = Limiters()
        self._rate_limit = app_module.DEFAULT_RATE_LIMIT

    async def _with_state(self, scope: Any, receive: Any, send: Any) -> None:
        # httpx.ASGITransport does not run the lifespan, so its state would never reach
        # the app's requests without this copy.
        if scope.get("type") in ("http", "websocket"):
            scope = {**scope, "state": dict(self._state)}
        await self.app(scope, receive, send)

    # Life ---------------------------------------------------------------------------------

    async def start(self) -> Self:
        """Run the app's lifespan (opening the library) once; idempotent."""
        async with self._lock:
            if self._started:
                return self
            lifespan: AbstractAsyncContextManager[Any] = self.app.router.lifespan_context(self.app)
            state = await self._stack.enter_async_context(lifespan)
            if isinstance(state, Mapping):
                self._state = state
            library: Library | None = getattr(self.app.state, "library", None)
            if library is not None:
                self._embedded_key = await anyio.to_thread.run_sync(embedded_key, library)
                setting = library.get_setting(app_module.RATE_LIMIT_SETTING)
                self._rate_limit = self._rate_setting or int(
                    setting or app_module.DEFAULT_RATE_LIMIT
                )
            elif self._rate_setting:
                self._rate_limit = self._rate_setting
            self._started = True
            return self

    async def aclose(self) -> None:
        """End the app's lifespan (closing the library); idempotent."""
        async with self._lock:
            self._started = False
            await self._stack.aclose()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()

    # What a client of this library needs ---------------------------------------------------

    @property
    def embedded_key(self) -> str:
        """The library's own read-write key (created on first start)."""
        if self._embedded_key is None:
            raise RuntimeError(_NOT_STARTED)
        return self._embedded_key

    @property
    def rate_limit_per_minute(self) -> int:
        """The server's request limit per key: a client's limiter only has to stay under it."""
        return self._rate_limit

    def client_options(self, api_key: str | None = None) -> dict[str, Any]:
        """Keyword arguments for a `ScreviClient` of this library (its own key by default)."""
        options: dict[str, Any] = {
            "api_key": self.embedded_key if api_key is None else api_key,
            "base_url": self.base_url,
            "transport": self,
            "rate_limit": self.rate_limit_per_minute,
        }
        return options

    def rate_limiter(self, api_key: str | None, rate: int, window: float) -> RateLimiter:
        """This library's client-side limiter for `api_key` (its own key or a caller's)."""
        return self._limiters.get(api_key, rate, window)

    # Transport ----------------------------------------------------------------------------

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self._started:
            raise RuntimeError(_NOT_STARTED)
        return await self._asgi.handle_async_request(request)

    async def handle_in_process(
        self, method: str, url: str, query: str, pairs: list[tuple[str, str]], body: bytes
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
        """Answer one request given in parts, as (status, headers, body), by running its API
        endpoint directly; None when it is not one of those (send it as HTTP instead).

        `url` is the absolute URL without its query, percent-encoded; `query` the encoded
        query string; `pairs` the headers. The endpoint sees the request (scope, headers,
        body) that httpx's ASGI transport and Starlette's routing would have handed it, and
        its answer is complete on return: the pipeline turns every failure into JSON.
        """
        if not self._started:
            raise RuntimeError(_NOT_STARTED)
        parts = urlsplit(url)
        if method == "HEAD" or "/." in parts.path:
            return None  # HEAD strips bodies, dot segments are normalized: HTTP's business
        try:
            headers = [(b"host", parts.netloc.encode("ascii"))]
            headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in pairs]
            raw_path, query_string = parts.path.encode("ascii"), query.encode("ascii")
        except UnicodeEncodeError:
            return None  # what httpx makes of such a request is its business too
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "headers": headers,
            "scheme": parts.scheme,
            "path": routing_path(parts.path),
            "raw_path": raw_path,
            "query_string": query_string,
            "server": (parts.hostname, parts.port),
            "client": _CLIENT_ADDRESS,
            "root_path": "",
            "state": dict(self._state),
            "app": self.app,
            "router": self.app.router,
        }
        endpoint = _route(self._routes, scope)
        if endpoint is None:
            return None
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        response = await endpoint(Request(scope, receive))
        return response.status_code, response.raw_headers, bytes(response.body)


def _route(routes: list[BaseRoute], scope: Scope) -> Endpoint | None:
    """The pipeline endpoint Starlette's router would run for `scope` (updated with what
    routing adds to it), or None for anything else: no route, a wrong method (405), or a
    route outside the pipeline. The first full match wins, as in Starlette's router."""
    for route in routes:
        match, child = route.matches(scope)
        if match is not Match.FULL:
            continue  # PARTIAL: the path with another method; a later route may take it
        scope.update(child)
        if isinstance(route, Mount):
            return _route(list(route.routes), scope)
        if isinstance(route, Route) and is_pipeline_endpoint(route.endpoint):
            endpoint: Endpoint = route.endpoint
            return endpoint
        return None
    return None
