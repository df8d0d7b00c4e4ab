"""Where things live by default, and the environment variables that move them."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

LIBRARY_ENV = "SCREVI_LIBRARY"
API_KEY_ENV = "SCREVI_API_KEY"
BASE_URL_ENV = "SCREVI_BASE_URL"


def default_library_path() -> Path:
    return Path(platformdirs.user_data_dir("screvi-mcp", appauthor=False)) / "library.sqlite3"


def library_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--library`, else $SCREVI_LIBRARY, else the user data directory."""
    if explicit:
        return Path(explicit).expanduser()
    from_env = os.environ.get(LIBRARY_ENV, "").strip()
    if from_env:
        return Path(from_env).expanduser()
    return default_library_path()
