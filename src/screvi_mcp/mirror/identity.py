"""Which account a mirror belongs to: the API's address and a fingerprint of the key.

The key itself is never stored or shown. A fingerprint only tells whether the key changed:
a new key may be the same account (keys are rotated), so a change is refused until the user
says so, rather than silently mixing two accounts in one library.
"""

from __future__ import annotations

import hashlib


class MirrorMismatch(RuntimeError):
    """The library is not a mirror of this account (or not a mirror at all)."""


def key_fingerprint(api_key: str) -> str:
    """A short, one-way fingerprint of a key: safe to store and print."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()[:16]


def normalise_base_url(base_url: str) -> str:
    return base_url.strip().rstrip("/")
