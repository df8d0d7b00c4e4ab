"""Which Screvi the tools talk to, and the one client they share.

Hosted (an API key) or the embedded library (a file); either way the tools see a
`ScreviClient` and never know which. The client starts on first use, so that starting the
server (and answering `initialize`) never waits for a library or a model to load.

On HTTP transports a remote client may send its own Screvi key in `X-Screvi-Api-Key`: its
calls then go out with that key through a client made for that call alone, over the shared
client's connections (no new connection or TLS session per call). The key is never stored,
logged or echoed.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context

from screvi_mcp.client import ScreviClient
from screvi_mcp.client.deadline import DEFAULT_CALL_DEADLINE, call_deadline
from screvi_mcp.client.ratelimit import DEFAULT_MAX_RATE_WAIT, share_key
from screvi_mcp.contract import HOSTED_BASE_URL, SCOPED_KEY_PREFIX
from screvi_mcp.embedded import embedded_client
from screvi_mcp.server.errors import tool_errors

log = logging.getLogger("screvi_mcp.server")

CLIENT_KEY_HEADER = "x-screvi-api-key"


@dataclass(frozen=True)
class BackendConfig:
    """Hosted when `api_key` is set, else the embedded library at `library_path`; with
    `mirror_path`, a mirror of the hosted account (its key, if any, is for refreshes and
    writes)."""

    api_key: str | None = None
    base_url: str | None = None
    library_path: Path | None = None
    # Everything one tool call does with Screvi ends within this many seconds.
    call_deadline: float | None = DEFAULT_CALL_DEADLINE
    # The longest one request waits at the client's rate limiter before `rate_limited`.
    max_rate_wait: float | None = DEFAULT_MAX_RATE_WAIT
    # Hosted: requests per minute per key the client keeps under (None: the API's 100).
    rate_limit: int | None = None
    mirror_path: Path | None = None
    # A `screvi_mcp.mirror.serving.FreshnessPolicy`; None for its defaults.
    mirror_policy: Any = None
    # A `screvi_mcp.review.daily.Settings` (size, clock); None: its defaults.
    review: Any = None

    @property
    def hosted(self) -> bool:
        return self.api_key is not None and self.mirror_path is None

    @property
    def mirror_read_only(self) -> bool:
        """A mirror without a (scoped) key cannot write: writes go to Screvi first."""
        return self.mirror_path is not None and (self.api_key is None or self.legacy_key)

    @property
    def legacy_key(self) -> bool:
        """A legacy key (no `sk_live_` prefix) can never write (spec, section 5)."""
        return self.api_key is not None and not self.api_key.startswith(SCOPED_KEY_PREFIX)

    def describe(self) -> str:
        if self.mirror_path is not None:
            base = self.base_url or HOSTED_BASE_URL
            how = "refreshed and written through" if self.api_key else "no key: not refreshed"
            return f"mirror of {base} at {self.mirror_path} ({how})"
        if self.hosted:
            return f"hosted Screvi API at {self.base_url or HOSTED_BASE_URL}"
        return f"embedded library at {self.library_path}"


def _own_key(headers: Mapping[str, str] | None) -> str:
    """The caller's own Screvi key from the request headers ("" when none was sent)."""
    return headers.get(CLIENT_KEY_HEADER, "").strip() if headers else ""


# Per process: a share key holds a digest of the caller's key, which must not identify it.
_SHARE_KEY_SALT = secrets.token_bytes(16)


def _session_key(ctx: Context) -> str:
    """Which MCP client a call belongs to: the unit of the rate limit's fair share.

    The SDK (2.x) builds a `ServerSession`, and on the 2026 protocol a `Connection` too, for
    every request: keyed by either, one agent counted as dozens of callers, each refused
    past a sliver of the limit. A transport session (streamable HTTP's `mcp-session-id`) is
    one client; stdio is the one client of this process; a sessionless HTTP request names no
    client, so it is known by what it comes with (`_sessionless_key`).
    """
    try:
        session = ctx.session
    except Exception:  # no request context (a call made outside a session)
        return "session-none"
    headers = ctx.headers
    session_id = getattr(getattr(session, "_connection", None), "session_id", None) or (
        headers.get("mcp-session-id") if headers else None
    )
    if session_id:
        return f"session-{session_id}"
    return "session-local" if headers is None else _sessionless_key(ctx, headers)


def _sessionless_key(ctx: Context, headers: Mapping[str, str]) -> str:
    """A sessionless HTTP client: its remote address and the Screvi key it presents (as a
    salted digest: share keys may be shown or logged, keys never). Clients behind one
    proxy or NAT with no key of their own still share one key; the limit itself holds."""
    client = getattr(getattr(ctx.request_context, "request", None), "client", None)
    address = getattr(client, "host", None) or "unknown"
    own_key = _own_key(headers)
    digest = (
        hmac.new(_SHARE_KEY_SALT, own_key.encode(), hashlib.sha256).hexdigest()[:16]
        if own_key
        else "none"
    )
    return f"http-{address}-key-{digest}"


class Backend:
    def __init__(self, config: BackendConfig) -> None:
        self.config = config
        self._client: ScreviClient | None = None
        self._lock = anyio.Lock()

    async def _build(self) -> ScreviClient:
        config = self.config
        if config.mirror_path is not None:
            from screvi_mcp.mirror.serving import mirrored_client

            return await mirrored_client(
                config.mirror_path,
                api_key=config.api_key,
                base_url=config.base_url or HOSTED_BASE_URL,
                policy=config.mirror_policy,
            )
        options: dict[str, Any] = {"max_rate_wait": config.max_rate_wait}
        if config.hosted:
            if config.base_url:
                options["base_url"] = config.base_url
            if config.rate_limit:
                options["rate_limit"] = config.rate_limit
            return ScreviClient.hosted(config.api_key or "", **options)
        assert config.library_path is not None
        return await embedded_client(config.library_path, **options)

    async def shared_client(self) -> ScreviClient:
        # Built on first use, never at start-up: `initialize` must not wait for the library.
        client = self._client
        if client is not None:  # every call after the first: no lock to take
            return client
        async with self._lock:
            if self._client is None:
                self._client = await self._build()
            return self._client

    @asynccontextmanager
    async def client(self, headers: Mapping[str, str] | None = None) -> AsyncIterator[ScreviClient]:
        """The client for one tool call: the caller's own key if it sent one, else shared."""
        own_key = _own_key(headers)
        if not own_key:
            yield await self.shared_client()
            return
        # Same API (for the embedded library, the same running app), the caller's key.
        client = (await self.shared_client()).with_api_key(own_key)
        try:
            yield client
        finally:
            await client.aclose()

    @asynccontextmanager
    async def call(self, ctx: Context, target: str | None = None) -> AsyncIterator[ScreviClient]:
        """The client for one tool call, with its failures turned into tool errors.

        `target` names what the call's id refers to, for not-found messages.
        """
        # `client()` inlined: this runs on every tool call, and each context manager costs.
        async with tool_errors(target):
            own_key = _own_key(ctx.headers)
            client = await self.shared_client()
            if own_key:
                client = client.with_api_key(own_key)
            try:
                # Each MCP session (stdio: the one session) gets a fair share of the rate limit.
                with share_key(_session_key(ctx)), call_deadline(self.config.call_deadline):
                    yield client
            finally:
                if own_key:
                    await client.aclose()

    async def aclose(self) -> None:
        async with self._lock:
            if self._client is not None:
                await self._client.aclose()
                self._client = None
