"""API keys of the embedded library: made once, stored hashed, checked on every request.

Scoped keys look like the hosted service's (`sk_live_` + random); legacy keys have no prefix
and are read-only forever, as the spec describes.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass

from screvi_mcp.contract import SCOPED_KEY_PREFIX
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library

SCOPED_PREFIX = SCOPED_KEY_PREFIX
# The embedded MCP server talks to its own library through the same auth as anyone else;
# its key is kept in plaintext in the settings table of the library it guards: the one key not
# stored hashed, because the server must present it. Whoever can read that file can read the
# library anyway, and the file is kept readable by its owner only (Library.make_private).
EMBEDDED_KEY_SETTING = "embedded_api_key"


@dataclass(frozen=True)
class ApiKey:
    id: str
    name: str
    hint: str
    scopes: frozenset[str]
    legacy: bool
    created_at: str
    revoked_at: str | None
    last_used_at: str | None

    @property
    def can_write(self) -> bool:
        return "write" in self.scopes and not self.legacy


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_key(
    library: Library, name: str, *, write: bool = False, legacy: bool = False
) -> tuple[ApiKey, str]:
    """Create a key; returns its record and the key itself (shown once, never stored)."""
    if legacy:
        secret = secrets.token_hex(24)
        scopes = "read"
    else:
        secret = SCOPED_PREFIX + secrets.token_urlsafe(32)
        scopes = "read write" if write else "read"
    key_id = str(uuid.uuid4())
    hint = secret[: len(SCOPED_PREFIX) + 4] if not legacy else secret[:4]
    created = clock.now()
    with library.write() as conn:
        conn.execute(
            "INSERT INTO api_keys(id, name, key_hash, hint, scopes, legacy, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key_id, name, hash_key(secret), hint, scopes, int(legacy), created),
        )
    record = ApiKey(key_id, name, hint, frozenset(scopes.split()), legacy, created, None, None)
    return record, secret


def _record(row: object) -> ApiKey:
    r = row  # sqlite3.Row
    return ApiKey(
        id=r["id"],  # type: ignore[index]
        name=r["name"],  # type: ignore[index]
        hint=r["hint"],  # type: ignore[index]
        scopes=frozenset(str(r["scopes"]).split()),  # type: ignore[index]
        legacy=bool(r["legacy"]),  # type: ignore[index]
        created_at=r["created_at"],  # type: ignore[index]
        revoked_at=r["revoked_at"],  # type: ignore[index]
        last_used_at=r["last_used_at"],  # type: ignore[index]
    )


def list_keys(library: Library) -> list[ApiKey]:
    rows = library.connection().execute("SELECT * FROM api_keys ORDER BY created_at").fetchall()
    return [_record(row) for row in rows]


def revoke_key(library: Library, key_id: str) -> bool:
    """Revoke a key by id (or by its hint); False when no live key matched."""
    with library.write() as conn:
        cursor = conn.execute(
            "UPDATE api_keys SET revoked_at = ? WHERE (id = ? OR hint = ?) AND revoked_at IS NULL",
            (clock.now(), key_id, key_id),
        )
    return cursor.rowcount > 0


def find_key(library: Library, secret: str) -> ApiKey | None:
    """The live key with this secret, or None (unknown or revoked)."""
    row = (
        library.connection()
        .execute(
            "SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL", (hash_key(secret),)
        )
        .fetchone()
    )
    return None if row is None else _record(row)


# How stale `last_used_at` may get: recording every request would make each read a write.
LAST_USED_RESOLUTION_SECONDS = 60


def use_is_due(record: ApiKey, now: str | None = None) -> bool:
    """Whether `record_use` would write now (the last recording is a minute old)."""
    if record.last_used_at is None:
        return True
    age = clock.parse_timestamp(now or clock.now()) - clock.parse_timestamp(record.last_used_at)
    return age.total_seconds() >= LAST_USED_RESOLUTION_SECONDS


def record_use(library: Library, record: ApiKey) -> None:
    """Note that the key was used now, at most once a minute per key."""
    now = clock.now()
    if not use_is_due(record, now):
        return
    with library.write() as conn:
        conn.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (now, record.id))


def embedded_key(library: Library) -> str:
    """The read-write key the in-process client uses, created on first use."""
    library.make_private()
    stored = library.get_setting(EMBEDDED_KEY_SETTING)
    if stored and find_key(library, stored) is not None:
        return stored
    _, secret = create_key(library, "screvi-mcp embedded client", write=True)
    library.set_setting(EMBEDDED_KEY_SETTING, secret)
    return secret
