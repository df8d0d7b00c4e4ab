"""Which account a mirror belongs to: the API's address and a fingerprint of the key.

The key itself is never stored or shown. A fingerprint only tells whether the key changed:
a new key may be the same account (keys are rotated), so a change is refused until the user
says so, rather than silently mixing two accounts in one library. And one sync of a
library at a time (`run_lock`).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path

from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import mirror_rows as store


class MirrorMismatch(RuntimeError):
    """The library is not a mirror of this account (or not a mirror at all)."""


def key_fingerprint(api_key: str) -> str:
    """A short, one-way fingerprint of a key: safe to store and print."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()[:16]


def normalise_base_url(base_url: str) -> str:
    return base_url.strip().rstrip("/")


@contextlib.contextmanager
def run_lock(path: Path) -> Iterator[None]:
    """One sync of a library at a time across processes (released by the OS on kill -9)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no cross-process lock
        yield
        return
    lock_path = path.with_name(path.name + ".sync-lock")
    with open(lock_path, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SyncBusy(f"another sync of {path} is running; wait for it to finish") from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class SyncBusy(RuntimeError):
    """Another process is syncing this library right now."""


def check_identity(
    library: Library, base_url: str, api_key: str, *, accept_new_key: bool = False
) -> bool:
    """Make sure the library mirrors this account; claim an empty library. True when new."""
    conn = library.connection()
    state = store.read_state(conn)
    fingerprint = key_fingerprint(api_key)
    base = normalise_base_url(base_url)
    identity_only = set(state) <= {store.STATE_BASE_URL, store.STATE_KEY_FINGERPRINT}
    if store.STATE_BASE_URL in state and identity_only and not store.holds_data(conn):
        # Claimed by a first run that copied nothing (a mistyped key or address the server
        # refused): nothing of any account is in it yet, so it is still free to claim.
        state = {}
    if store.STATE_BASE_URL not in state:
        if store.holds_data(conn):
            raise MirrorMismatch(
                f"{library.path} already holds a library that is not a mirror; sync into a new "
                "file with --library PATH"
            )
        store.write_state(
            library, {store.STATE_BASE_URL: base, store.STATE_KEY_FINGERPRINT: fingerprint}
        )
        return True
    if state[store.STATE_BASE_URL] != base:
        raise MirrorMismatch(
            f"{library.path} mirrors {state[store.STATE_BASE_URL]}, not {base}; use another "
            "--library for this address"
        )
    if state.get(store.STATE_KEY_FINGERPRINT) != fingerprint:
        if not accept_new_key:
            raise MirrorMismatch(
                f"{library.path} was synced with another API key (fingerprint "
                f"{state.get(store.STATE_KEY_FINGERPRINT)}, this one is {fingerprint}). If it is "
                "the same Screvi account, run again with --new-key; otherwise use another --library"
            )
        store.write_state(library, {store.STATE_KEY_FINGERPRINT: fingerprint})
    return False
