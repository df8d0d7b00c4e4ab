"""Unit tests of the embedded API's small parts: rate-limit window, pagination, query params,
article chunking. The HTTP suites (tests/local/api) cover them end to end; these pin the
edges that HTTP cannot reach quickly, such as a window sliding past."""

from __future__ import annotations

import pytest

from screvi_mcp.local.api import key_rate_limit
from screvi_mcp.local.api.error_answers import ApiError
from screvi_mcp.local.api.query_params import QueryParams
from screvi_mcp.local.storage.store.articles import chunk
from screvi_mcp.local.storage.store.pages import like_pattern, offset, pagination


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return 1_700_000_000.0 + self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(key_rate_limit.time, "monotonic", fake.monotonic)
    monkeypatch.setattr(key_rate_limit.time, "time", fake.time)
    return fake


def test_window_slides(clock: FakeClock) -> None:
    limiter = key_rate_limit.KeyRateLimiter(2)
    assert limiter.check("k").allowed
    clock.now += 30
    second = limiter.check("k")
    assert second.allowed and second.remaining == 0
    clock.now += 10
    refused = limiter.check("k")
    assert not refused.allowed
    # The first request leaves the window 60 s after it was made: 20 s from now.
    assert refused.retry_after == 20
    assert refused.headers()["Retry-After"] == "20"
    assert int(refused.headers()["X-RateLimit-Reset"]) == int(clock.time() + 20)
    clock.now += 20
    again = limiter.check("k")
    assert again.allowed and again.remaining == 0
    assert "Retry-After" not in again.headers()


def test_refused_requests_do_not_count(clock: FakeClock) -> None:
    limiter = key_rate_limit.KeyRateLimiter(1)
    assert limiter.check("k").allowed
    for _ in range(5):
        clock.now += 1
        assert not limiter.check("k").allowed
    clock.now = 1060.0  # exactly when the one counted request leaves the window
    assert limiter.check("k").allowed


def test_keys_are_independent(clock: FakeClock) -> None:
    limiter = key_rate_limit.KeyRateLimiter(1)
    assert limiter.check("a").allowed
    assert not limiter.check("a").allowed
    assert limiter.check("b").allowed


def test_pagination_arithmetic() -> None:
    assert pagination(0, 1, 20) == {
        "page": 1,
        "per_page": 20,
        "total": 0,
        "total_pages": 0,
        "has_more": False,
    }
    assert pagination(20, 1, 20)["total_pages"] == 1
    assert pagination(20, 1, 20)["has_more"] is False
    assert pagination(21, 1, 20)["total_pages"] == 2
    assert pagination(21, 1, 20)["has_more"] is True
    assert pagination(21, 2, 20)["has_more"] is False
    assert pagination(5, 9, 2)["has_more"] is False
    assert offset(3, 20) == 40
    assert offset(10**30, 100) == 2**62  # within SQLite's 64-bit OFFSET


def test_like_pattern_escapes_wildcards() -> None:
    assert like_pattern("50%_off\\") == "%50\\%\\_off\\\\%"


def test_query_params() -> None:
    params = QueryParams(
        {"a": " 5 ", "b": "TRUE", "c": "off", "d": "", "t": "2024-01-01T02:00:00+02:00"}
    )
    assert params.integer("a") == 5
    assert params.boolean("b") is True and params.boolean("c") is False
    assert params.boolean("d") is None and params.string("d") is None
    assert params.timestamp("t") == "2024-01-01T00:00:00.000000Z"
    assert QueryParams({"per_page": "500"}).per_page(default=20, maximum=100) == 100
    assert QueryParams({}).per_page(default=50, maximum=100) == 50
    with pytest.raises(ApiError) as error:
        QueryParams({"page": "0"}).page()
    assert error.value.status == 400 and error.value.fields == {"page": "must be at least 1"}
    with pytest.raises(ApiError):
        QueryParams({"x": "1.5"}).integer("x")
    with pytest.raises(ApiError):
        QueryParams({"x": "nan"}).number("x", default=0.5, minimum=0, maximum=1)
    assert QueryParams({"u": "ABCDEF00-0000-0000-0000-000000000000"}).uuid("u") == (
        "abcdef00-0000-0000-0000-000000000000"
    )


@pytest.mark.parametrize(
    ("start", "max_chars", "content", "truncated"),
    [
        (0, None, "abcdef", False),
        (0, 4, "abcd", True),
        (2, 4, "cdef", False),
        (4, 4, "ef", False),
        (6, 4, "", False),
        (9, None, "", False),
    ],
)
def test_chunk(start: int, max_chars: int | None, content: str, truncated: bool) -> None:
    piece = chunk("abcdef", start, max_chars)
    assert piece == {
        "content": content,
        "content_length": 6,
        "content_offset": start,
        "content_truncated": truncated,
    }


def test_chunk_of_a_missing_body() -> None:
    assert chunk(None, 0, None)["content"] is None
    assert chunk(None, 0, None)["content_length"] == 0
