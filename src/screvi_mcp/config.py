"""Where things live by default, and the environment variables that move them."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

from screvi_mcp import contract

LIBRARY_ENV = "SCREVI_LIBRARY"
API_KEY_ENV = "SCREVI_API_KEY"
BASE_URL_ENV = "SCREVI_BASE_URL"
# Bounds of one tool call, in seconds (defaults in client/deadline.py and client/ratelimit.py).
CALL_DEADLINE_ENV = "SCREVI_CALL_DEADLINE"
MAX_RATE_WAIT_ENV = "SCREVI_MAX_RATE_WAIT"
# Requests per minute per key the client keeps under in hosted mode (default: the API's 100).
RATE_LIMIT_ENV = "SCREVI_RATE_LIMIT"
API_ROOT_PATH = "/api/v1"


class ConfigurationProblem(Exception):
    """A configuration the server cannot start with; the message is one line for the user."""


def library_path_is_default(explicit: str | os.PathLike[str] | None = None) -> bool:
    """True when neither `--library` nor $SCREVI_LIBRARY chose the library file."""
    return not explicit and not os.environ.get(LIBRARY_ENV, "").strip()


def check_base_url(base_url: str) -> None:
    """A hosted base URL is an http(s) address that ends at the API root, `/api/v1`."""
    parsed = urlsplit(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigurationProblem(
            f"{BASE_URL_ENV}={base_url} is not an http(s) address; use e.g. "
            f"{contract.HOSTED_BASE_URL}"
        )
    if parsed.path.rstrip("/") != API_ROOT_PATH:
        root = f"{parsed.scheme}://{parsed.netloc}"
        raise ConfigurationProblem(
            f"{BASE_URL_ENV}={base_url} does not end at the API root {API_ROOT_PATH}; "
            f"use {root}{API_ROOT_PATH}"
        )


def default_library_path() -> Path:
    return Path(platformdirs.user_data_dir("screvi-mcp", appauthor=False)) / "library.sqlite3"


def default_mirror_path() -> Path:
    """Where `screvi-mcp sync` writes a mirror and `--mirror` serves it from by default."""
    return default_library_path().with_name("mirror.sqlite3")


def library_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--library`, else $SCREVI_LIBRARY, else the user data directory."""
    if explicit:
        return Path(explicit).expanduser()
    from_env = os.environ.get(LIBRARY_ENV, "").strip()
    if from_env:
        return Path(from_env).expanduser()
    return default_library_path()


def seconds_from_env(name: str, default: float) -> float:
    """A positive number of seconds from the environment, else `default`.

    Raises ValueError naming the variable when it is set to anything else.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < 86400:
        raise ValueError(f"{name} must be a number of seconds above 0, got {raw!r}")
    return value


def per_minute_from_env(name: str) -> int | None:
    """A positive whole number of requests per minute from the environment, else None.

    Raises ValueError naming the variable when it is set to anything else.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not 0 < int(raw) <= 1_000_000:
        raise ValueError(f"{name} must be a whole number of requests per minute, got {raw!r}")
    return int(raw)
