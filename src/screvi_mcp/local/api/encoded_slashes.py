"""Route by the path as sent: a `%2F` inside one segment stays inside it.

ASGI servers hand over the path already decoded, so `/highlights/a%2Fb` would be routed as
`/highlights/a/b` (no endpoint) and `/highlights/..%2Ftags` as the tags of a highlight `..`
(a wrong method). No id holds a slash, so such a segment is a malformed id, which the spec
answers 404 `not_found` like any other: routed with the slash kept encoded, it reaches its
endpoint (auth, rate limit, and the id's own not-found answer) as a well-formed path would.
"""

from __future__ import annotations

from urllib.parse import unquote

from starlette.types import ASGIApp, Receive, Scope, Send


def routing_path(raw_path: str) -> str:
    """`raw_path` (percent-encoded) decoded segment by segment, a slash inside one kept as %2F."""
    return "/".join(unquote(part).replace("/", "%2F") for part in raw_path.split("/"))


class KeepEncodedSlashes:
    """ASGI middleware: routes a request whose path has an encoded slash by `routing_path`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw: bytes | None = scope.get("raw_path") if scope["type"] == "http" else None
        if raw and b"%2f" in raw.lower():
            text = raw.decode("latin-1")
            path: str = scope["path"]
            decoded = unquote(text)
            # A root_path (a proxy's prefix) may precede what the client sent: keep it.
            if path.endswith(decoded):
                scope = {**scope, "path": path[: len(path) - len(decoded)] + routing_path(text)}
        await self.app(scope, receive, send)
