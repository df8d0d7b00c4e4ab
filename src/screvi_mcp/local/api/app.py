"""The embedded library as an ASGI app: the spec's API under /api/v1, the skill file at the root.

`create_app(path)` is all a caller needs: the lifespan opens the library (running migrations),
attaches the search index and starts background work; requests never see a half-open library.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import Scope

from screvi_mcp import contract
from screvi_mcp.local.api import auth, keys
from screvi_mcp.local.api.encoded_slashes import KeepEncodedSlashes
from screvi_mcp.local.api.key_rate_limit import KeyRateLimiter
from screvi_mcp.local.api.request_pipeline import MAX_BODY_BYTES
from screvi_mcp.local.api.routes import (
    articles,
    highlights,
    passages,
    search,
    skill,
    sources,
    tags,
)
from screvi_mcp.local.fetching.fetcher import Fetcher
from screvi_mcp.local.fetching.netguard import AddressPolicy
from screvi_mcp.local.fetching.pipeline import ArticleWorker
from screvi_mcp.local.passages import attach as passage_index
from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index
from screvi_mcp.local.search.model_move import start_default_model
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import mirror_rows as mirror_store
from screvi_mcp.skillfile import bundled_skill_path

log = logging.getLogger("screvi_mcp.local")

API_PREFIX = "/api/v1"
DEFAULT_RATE_LIMIT = contract.RATE_LIMIT_PER_MINUTE
RATE_LIMIT_SETTING = "rate_limit_per_minute"

_CODES_BY_STATUS = {404: "not_found", 405: "method_not_allowed"}


async def _is_legacy_key(request: Request) -> bool:
    secret = auth.presented_key(request)
    library: Library | None = getattr(request.app.state, "library", None)
    if secret is None or library is None:
        return False
    record = await anyio.to_thread.run_sync(keys.find_key, library, secret)
    return record is not None and record.legacy


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = _CODES_BY_STATUS.get(exc.status_code, "invalid_request")
    message = {
        404: f"No such endpoint: {request.method} {request.url.path}",
        405: f"{request.method} is not supported on {request.url.path}",
    }.get(exc.status_code, str(exc.detail))
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        # Starlette names the methods of the first route matching the path only; one path
        # here is served by several routes (GET and POST /highlights), so name them all.
        # Matched from the top: the scope here is the one a Mount already descended into.
        scope = {**request.scope, "root_path": request.scope.get("app_root_path", "")}
        headers["Allow"] = ", ".join(_allowed_methods(request.app.routes, scope))
    # Every answer to a legacy key carries Deprecation (spec 5.4), even for a wrong path.
    if await _is_legacy_key(request):
        headers["Deprecation"] = "true"
    return JSONResponse(
        {"error": message, "code": code}, status_code=exc.status_code, headers=headers
    )


def _allowed_methods(routes: Sequence[BaseRoute], scope: Scope) -> list[str]:
    """Every method some route serves at this request's path, in a stable order."""
    allowed: set[str] = set()
    for route in routes:
        match, child = route.matches(scope)
        if match == Match.NONE:
            continue
        if isinstance(route, Mount):
            allowed.update(_allowed_methods(route.routes, {**scope, **child}))
        elif isinstance(route, Route) and route.methods:
            allowed.update(route.methods)
    order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    return sorted(allowed, key=lambda m: order.index(m) if m in order else len(order))


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


# /ext/ holds extensions of the API, not in the spec.
_API_ROUTES: list[BaseRoute] = [
    *highlights.routes,
    *search.routes,
    *sources.routes,
    *articles.routes,
    *tags.routes,
    *passages.routes,
]


def _set_state(
    app: Starlette,
    library: Library,
    rate_limit_per_minute: int | None,
    skill_path: Path | None,
    max_body_bytes: int,
) -> None:
    """What the request pipeline and the routes read from `app.state`."""
    limit = rate_limit_per_minute or int(
        library.get_setting(RATE_LIMIT_SETTING, str(DEFAULT_RATE_LIMIT)) or DEFAULT_RATE_LIMIT
    )
    app.state.library = library
    app.state.rate_limiter = KeyRateLimiter(limit)
    # Without --rate-limit, the library's setting is read per request, as the
    # subscription is: `screvi-mcp library rate-limit N` applies to a running server.
    app.state.rate_limit_setting = (
        None
        if rate_limit_per_minute
        else lambda: int(library.get_setting(RATE_LIMIT_SETTING) or DEFAULT_RATE_LIMIT)
    )
    app.state.skill_path = skill_path or bundled_skill_path()
    app.state.max_body_bytes = max_body_bytes


def _attach_indexes(library: Library) -> None:
    """Load stored vectors (never re-embedding); keyword-only without the extra."""
    attach_semantic_index(library)
    # MiniLM only because the default model is missing: install it in the background;
    # article passages follow the highlights onto it.
    start_default_model(library, lambda: passage_index.follow_english_model(library))
    passage_index.attach(library)  # article passages' vectors, embedded by their worker


async def _detach_indexes(library: Library) -> None:
    """Stop the embedding workers: what they had not embedded stays queued in the file."""
    await anyio.to_thread.run_sync(detach_semantic_index, library)
    await anyio.to_thread.run_sync(passage_index.detach, library)


def create_app(
    library_path: Path | str,
    *,
    rate_limit_per_minute: int | None = None,
    skill_path: Path | None = None,
    allow_private_networks: bool | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    background_work: bool = True,
) -> Starlette:
    """The API app over the library file at `library_path` (created if missing).

    `allow_private_networks` lets the article fetcher reach loopback and private addresses
    (None: as `SCREVI_ALLOW_PRIVATE_NETWORKS` says; off by default). Without
    `background_work` neither the search index (its model) nor the article worker starts:
    for a one-shot reader such as an export, which needs neither (search is keyword-only).
    """

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        library = Library.open(library_path)
        _set_state(app, library, rate_limit_per_minute, skill_path, max_body_bytes)
        if background_work:
            _attach_indexes(library)
        fetcher = Fetcher(AddressPolicy.from_env(allow_private_networks))
        worker = ArticleWorker(library, fetcher)
        app.state.fetcher = fetcher
        app.state.article_worker = worker
        # A mirror's articles are fetched by Screvi and copied by `sync`: never fetched here.
        fetches = background_work and not mirror_store.is_mirror(library.connection())
        if fetches:
            await worker.start()  # also resumes articles a crash left queued or fetching
        try:
            yield
        finally:
            if fetches:
                await worker.stop()
            await fetcher.aclose()
            await _detach_indexes(library)
            library.close()

    return Starlette(
        routes=[
            Route("/health", _health, methods=["GET"]),
            *skill.routes,
            Mount(API_PREFIX, routes=_API_ROUTES),
        ],
        exception_handlers={HTTPException: _http_error},
        middleware=[Middleware(KeepEncodedSlashes)],
        lifespan=lifespan,
    )
