"""The public skill file: served by the API at its root, bundled with the package as fallback."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx

from screvi_mcp.client.engine import BaseClient
from screvi_mcp.client.errors import error_from_response
from screvi_mcp.client.marks import fixed
from screvi_mcp.skillfile import bundled_skill_path

logger = logging.getLogger("screvi_mcp.client")

# Both paths serve the same file (spec, section 4); the well-known one is canonical.
SKILL_PATHS: tuple[str, ...] = ("/.well-known/skills/default/skill.md", "/skill.md")


@dataclass(frozen=True)
class SkillFile:
    """The skill file's Markdown and where it came from (`api` or `bundled`)."""

    content: str
    origin: Literal["api", "bundled"]
    location: str


class SkillFileUnavailable(FileNotFoundError):
    """Neither the API nor the bundled copy could provide the skill file."""


def root_url(base_url: str) -> str:
    """The host root the skill file hangs off: the base URL without its `/api/v1`."""
    root = base_url.rstrip("/")
    suffix = "/api/v1"
    if root.endswith(suffix):
        root = root[: -len(suffix)]
    return root


def load_bundled_skill(path: Path | None = None) -> SkillFile:
    """The skill file shipped with the package (the wheel's `_bundled_skills`), or the repo's.

    `path` overrides both, for tests and for users who keep their own copy.
    """
    candidate = path if path is not None else bundled_skill_path()
    if candidate is not None:
        try:
            return SkillFile(candidate.read_text("utf-8"), "bundled", str(candidate))
        except OSError:
            pass
    raise SkillFileUnavailable(
        f"no bundled skill file found (looked for {candidate or 'the package copy'})"
    )


class SkillResource(BaseClient):
    @fixed
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
