"""The library file holds the embedded client's key in plaintext (the one key not stored
hashed): the file and its WAL beside it are readable by their owner only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from screvi_mcp.local.api import keys
from screvi_mcp.local.storage.library import Library

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_library_is_private_to_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    old_umask = os.umask(0o022)  # the usual umask, which would make it world-readable
    try:
        library = Library.open(path)
        try:
            keys.embedded_key(library)
            siblings = [p for p in tmp_path.iterdir() if p.name.startswith(path.name)]
            assert siblings, "the library and its WAL files"
            for each in siblings:
                assert mode(each) & 0o077 == 0, (each.name, oct(mode(each)))
        finally:
            library.close()
    finally:
        os.umask(old_umask)


def test_storing_the_embedded_key_closes_an_open_library_file(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    Library.open(path).close()
    path.chmod(0o644)  # made by an older version, or by hand
    library = Library.open(path)
    try:
        secret = keys.embedded_key(library)
        assert mode(path) & 0o077 == 0, oct(mode(path))
        # The key the file keeps is the only plaintext one; every other key is a hash.
        rows = library.connection().execute("SELECT key_hash FROM api_keys").fetchall()
        assert all(secret not in row[0] for row in rows)
    finally:
        library.close()
