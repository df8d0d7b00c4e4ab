"""When a failed request may be sent again, and how long to wait first.

The rule that matters: a request that may have reached the server is repeated only if
repeating it is harmless. A POST that timed out may already have created a highlight, so
it is never resent; a POST refused with 429, or one whose connection was never opened,
provably was not processed and may be.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

# Methods whose repetition cannot change anything the first attempt did. DELETE is
# idempotent per the spec, but a 5xx after a cascade delete may hide a half-done job, so
# only reads are repeated after the server may have acted.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# Transport failures that happen before a single byte of the request left this process.
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds on retrying.

    `max_retries` counts resends after the first attempt. `max_total_wait` caps the sum of
    all back-off sleeps of one call: an agent waiting on a tool call should get an error it
    can act on, not a hang. A `Retry-After` beyond what is left of that budget is not waited
    for at all; the 429 is raised at once with `retry_after` set.
    """

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_total_wait: float = 30.0

    def backoff(self, retry_number: int, rng: random.Random | None = None) -> float:
        """Full-jitter exponential back-off for the n-th retry (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * (2 ** (retry_number - 1)))
        return (rng or random).uniform(0.0, ceiling)


def may_resend_after_status(method: str, status: int) -> bool:
    """May a request that got this status be sent again?"""
    if status == 429:
        # Refused before being processed, whatever the method.
        return True
    if status >= 500:
        return method.upper() in SAFE_METHODS
    return False


# Failures that can pass on a second try; a bad URL or an unsupported scheme cannot.
TRANSIENT = (httpx.NetworkError, httpx.TimeoutException, httpx.RemoteProtocolError)


def may_resend_after_error(method: str, error: httpx.TransportError) -> bool:
    """May a request that failed with this transport error be sent again?"""
    if not isinstance(error, TRANSIENT):
        return False
    if isinstance(error, NEVER_SENT):
        return True
    return method.upper() in SAFE_METHODS


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or HTTP-date)."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)
