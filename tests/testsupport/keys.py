"""A key of a library file that is not served yet, made as `screvi-mcp keys create` makes it."""

from __future__ import annotations

from pathlib import Path

from screvi_mcp.local.api import keys
from screvi_mcp.local.storage.library import Library


def new_key(path: Path, name: str = "test", *, write: bool = True) -> str:
    """The secret of a new key of the library at `path` (created if missing)."""
    library = Library.open(path)
    try:
        _, secret = keys.create_key(library, name, write=write)
    finally:
        library.close()
    return secret
