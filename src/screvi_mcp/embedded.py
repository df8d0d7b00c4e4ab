"""A started client of an embedded library file, for every command that reads or writes one.

Sits above `client/` and `local/` (which never import each other): the MCP server's
backend, `sample` and `export` all open a library this way, so the start-up and the
clean-up on a failed start live in one place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from screvi_mcp.client import ScreviClient


async def embedded_client(
    library_path: str | Path,
    *,
    api_key: str | None = None,
    server_rate_limit_per_minute: int | None = None,
    background_work: bool = True,
    **options: Any,
) -> ScreviClient:
    """A started client of the embedded library at `library_path`, served in-process.

    The library's transport is started here (opening the file once); the client owns it, so
    closing the client ends the app. It sends the library's embedded key unless `api_key`
    is given, and its limiter stays under the library's own rate setting. Without
    `background_work` the app loads no search model and fetches no article (`create_app`).
    """
    # Imported here: the hosted path must not load the embedded library's dependencies.
    from screvi_mcp.local.api.seam import EmbeddedLibrary

    library = EmbeddedLibrary(
        library_path,
        rate_limit_per_minute=server_rate_limit_per_minute,
        background_work=background_work,
    )
    await library.start()
    try:
        return ScreviClient(**{**library.client_options(api_key), **options})
    except BaseException:
        await library.aclose()
        raise
