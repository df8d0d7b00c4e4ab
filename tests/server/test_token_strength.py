"""Auth tokens are judged by what they hold, not their length (issue 31, item 12): `a`×32
was accepted on 0.0.0.0, and 40 spaces started a server nobody could log in to."""

from __future__ import annotations

import secrets

import pytest

from screvi_mcp.server.transport import HttpOptions, StartupRefused, check_exposure


@pytest.mark.parametrize(
    ("token", "why"),
    [
        ("a" * 32, "too few different characters"),
        ("password" * 4, "too few different characters"),
        (" " * 40, "spaces or control characters"),
        (secrets.token_urlsafe(32) + " ", "spaces or control characters"),
        ("ab" * 8, "at least 32 characters"),
    ],
    # Fixed ids: the random token would name the test differently in each xdist worker.
    ids=["a-x32", "password-x4", "spaces", "strong-with-space", "short"],
)
def test_weak_or_unusable_tokens_are_refused(token: str, why: str) -> None:
    with pytest.raises(StartupRefused) as refused:
        check_exposure(HttpOptions(host="0.0.0.0", auth_token=token))
    assert why in str(refused.value)
    if token.strip():
        assert token.strip() not in str(refused.value)  # never echoed


@pytest.mark.parametrize("make", [lambda: secrets.token_urlsafe(32), lambda: secrets.token_hex(16)])
def test_tokens_made_the_usual_ways_are_accepted(make: object) -> None:
    for _ in range(20):
        check_exposure(HttpOptions(host="0.0.0.0", auth_token=make()))  # type: ignore[operator]
