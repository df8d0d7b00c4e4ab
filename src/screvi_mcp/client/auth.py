"""The API key on the wire: sent per request, never shown past its kind."""

from __future__ import annotations

from typing import Any

import httpx

from screvi_mcp.contract import SCOPED_KEY_PREFIX


def mask_key(api_key: str | None) -> str:
    """What may be shown of a key: its kind, never a character of the secret part."""
    if not api_key:
        return "none"
    if api_key.startswith(SCOPED_KEY_PREFIX):
        return SCOPED_KEY_PREFIX + "***"
    return "legacy-***"


class ApiKeyAuth(httpx.Auth):
    """Adds `X-API-Key` per request, so the key never sits in the client's default headers."""

    def __init__(self, api_key: str) -> None:
        self._api_key = api_key

    def auth_flow(self, request: httpx.Request) -> Any:
        request.headers["X-API-Key"] = self._api_key
        yield request

    def __repr__(self) -> str:
        return f"ApiKeyAuth({mask_key(self._api_key)})"
