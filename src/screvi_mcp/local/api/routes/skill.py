"""The public skill file at the host root: no authentication (spec, section 4)."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


async def skill_file(request: Request) -> Response:
    path: Path | None = request.app.state.skill_path
    if path is None or not path.is_file():
        return JSONResponse(
            {"error": "No skill file is published here", "code": "not_found"}, status_code=404
        )
    return Response(path.read_text(encoding="utf-8"), media_type="text/markdown; charset=utf-8")


routes = [
    Route("/.well-known/skills/default/skill.md", skill_file, methods=["GET"]),
    Route("/skill.md", skill_file, methods=["GET"]),
]
