"""Retries under faults: which requests are resent, how often, after what wait, and what is raised.

Faults are injected at the HTTP transport (httpx.MockTransport); everything above it is the
real client.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from client_testkit import (
    HIGHLIGHT,
    FaultServer,
    MockClientFactory,
    Sleeps,
    error_reply,
    json_reply,
)

from screvi_mcp.client import (
    InternalServerError,
    RateLimitedError,
    RetryPolicy,
    ScreviAPIError,
    ScreviConnectionError,
    ScreviTimeoutError,
    UnexpectedResponseError,
)

OK_PAGINATION = {"page": 1, "per_page": 20, "total": 1, "total_pages": 1, "has_more": False}
OK_LIST = json_reply(200, {"data": [HIGHLIGHT], "pagination": OK_PAGINATION})
CREATED = json_reply(201, {"data": HIGHLIGHT})
BAD_GATEWAY_HTML = httpx.Response(
    502,
    text="<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1>"
    "<hr><center>nginx</center></body></html>",
    headers={"content-type": "text/html"},
)


def _request() -> httpx.Request:
    return httpx.Request("GET", "http://127.0.0.1:9/")


async def test_429_with_retry_after_waits_that_long_then_succeeds(
    mock_client: MockClientFactory, sleeps: Sleeps
) -> None:
    server = FaultServer([error_reply(429, "rate_limited", headers={"Retry-After": "7"}), OK_LIST])
    async with mock_client(server) as client:
        page = await client.list_highlights()
    assert [h.id for h in page.data] == [HIGHLIGHT["id"]]
    assert server.count() == 2
    assert sleeps.waits == [7.0]


async def test_429_on_post_is_resent_because_it_was_refused_unprocessed(
    mock_client: MockClientFactory, sleeps: Sleeps
) -> None:
    server = FaultServer([error_reply(429, "rate_limited", headers={"Retry-After": "1"}), CREATED])
    async with mock_client(server) as client:
        highlight = await client.create_highlight("The map is not the territory.")
    assert highlight.id == HIGHLIGHT["id"]
    assert server.count("POST") == 2
    assert sleeps.waits == [1.0]


async def test_429_without_retry_after_backs_off_exponentially_then_raises(
    mock_client: MockClientFactory, sleeps: Sleeps
) -> None:
    policy = RetryPolicy(max_retries=4, base_delay=0.5, max_delay=8.0, max_total_wait=60.0)
    server = FaultServer([error_reply(429, "rate_limited", "Too many requests")])
    async with mock_client(server, retry=policy) as client:
        with pytest.raises(RateLimitedError) as caught:
            await client.list_tags()
    assert server.count() == 5
    assert len(sleeps.waits) == 4
    # Full jitter: each wait is somewhere below its doubling ceiling.
    for retry_number, wait in enumerate(sleeps.waits, start=1):
        assert 0.0 <= wait <= 0.5 * 2 ** (retry_number - 1)
    assert caught.value.status == 429
    assert caught.value.code == "rate_limited"
    assert caught.value.retry_after is None


async def test_retry_after_beyond_the_budget_is_raised_at_once_with_the_wait(
    mock_client: MockClientFactory, sleeps: Sleeps
) -> None:
    server = FaultServer([error_reply(429, "rate_limited", headers={"Retry-After": "3600"})])
    async with mock_client(server, retry=RetryPolicy(max_total_wait=30.0)) as client:
        with pytest.raises(RateLimitedError) as caught:
            await client.list_tags()
    assert server.count() == 1
    assert sleeps.waits == []
    assert caught.value.retry_after == 3600.0


async def test_total_wait_is_bounded_across_retries(
    mock_client: MockClientFactory, sleeps: Sleeps
) -> None:
    server = FaultServer([error_reply(429, "rate_limited", headers={"Retry-After": "20"})])
    async with mock_client(server, retry=RetryPolicy(max_retries=5, max_total_wait=30.0)) as client:
        with pytest.raises(RateLimitedError):
            await client.list_tags()
    assert sleeps.waits == [20.0]
    assert server.count() == 2


async def test_500_on_get_is_retried_until_the_retries_run_out(
    mock_client: MockClientFactory, sleeps: Sleeps
) -> None:
    server = FaultServer([error_reply(500, "internal_error", "boom")])
    async with mock_client(server, retry=RetryPolicy(max_retries=3)) as client:
        with pytest.raises(InternalServerError) as caught:
            await client.get_highlight(HIGHLIGHT["id"])
    assert server.count("GET") == 4
    assert len(sleeps.waits) == 3
    assert (caught.value.status, caught.value.code, caught.value.message) == (
        500,
        "internal_error",
        "boom",
    )


async def test_500_then_success_on_get_returns_the_result(mock_client: MockClientFactory) -> None:
    server = FaultServer([error_reply(500, "internal_error"), OK_LIST])
    async with mock_client(server) as client:
        page = await client.list_highlights()
    assert page.pagination.total == 1
    assert server.count() == 2


@pytest.mark.parametrize("method", ["POST", "PATCH", "DELETE"])
async def test_500_on_a_write_is_never_resent(
    mock_client: MockClientFactory, sleeps: Sleeps, method: str
) -> None:
    server = FaultServer([error_reply(500, "internal_error")])
    async with mock_client(server) as client:
        with pytest.raises(InternalServerError):
            if method == "POST":
                await client.create_highlight("x")
            elif method == "PATCH":
                await client.update_highlight(HIGHLIGHT["id"], favorite=True)
            else:
                await client.delete_highlight(HIGHLIGHT["id"])
    assert server.count() == 1
    assert server.sent[0].method == method
    assert sleeps.waits == []


async def test_502_html_page_on_post_is_raised_readably_and_not_resent(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([BAD_GATEWAY_HTML])
    async with mock_client(server) as client:
        with pytest.raises(UnexpectedResponseError) as caught:
            await client.create_highlight("x")
    assert server.count("POST") == 1
    error = caught.value
    assert error.status == 502
    assert error.code == "unexpected_response"
    assert "text/html" in error.message
    assert "502 Bad Gateway" in error.message


async def test_502_html_page_on_get_is_retried_then_succeeds(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([BAD_GATEWAY_HTML, BAD_GATEWAY_HTML, OK_LIST])
    async with mock_client(server) as client:
        page = await client.list_highlights()
    assert len(page.data) == 1
    assert server.count() == 3


async def test_html_429_from_a_proxy_still_counts_as_rate_limited(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([httpx.Response(429, text="<html>slow down</html>")])
    async with mock_client(server, retry=RetryPolicy(max_retries=0)) as client:
        with pytest.raises(RateLimitedError) as caught:
            await client.list_tags()
    assert caught.value.code == "rate_limited"


async def test_read_timeout_on_get_is_retried(mock_client: MockClientFactory) -> None:
    server = FaultServer([httpx.ReadTimeout("slow", request=_request()), OK_LIST])
    async with mock_client(server) as client:
        page = await client.list_highlights()
    assert len(page.data) == 1
    assert server.count("GET") == 2


async def test_read_timeout_on_post_is_not_resent_and_raises_timeout(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([httpx.ReadTimeout("slow", request=_request()), CREATED])
    async with mock_client(server) as client:
        with pytest.raises(ScreviTimeoutError):
            await client.create_highlight("x")
    assert server.count("POST") == 1


@pytest.mark.parametrize(
    "reset",
    [
        httpx.ReadError("Connection reset by peer", request=_request()),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
        httpx.WriteError("Broken pipe", request=_request()),
    ],
    ids=["read-reset", "disconnect", "write-broken"],
)
async def test_reset_after_sending_a_post_is_not_resent(
    mock_client: MockClientFactory, reset: Exception
) -> None:
    server = FaultServer([reset, CREATED])
    async with mock_client(server) as client:
        with pytest.raises(ScreviConnectionError) as caught:
            await client.create_highlights_bulk([{"content": "a"}, {"content": "b"}])
    assert not isinstance(caught.value, ScreviTimeoutError)
    assert server.count("POST") == 1


async def test_reset_on_get_is_retried(mock_client: MockClientFactory) -> None:
    server = FaultServer([httpx.ReadError("Connection reset by peer", request=_request()), OK_LIST])
    async with mock_client(server) as client:
        await client.list_highlights()
    assert server.count() == 2


@pytest.mark.parametrize(
    "never_sent",
    [
        httpx.ConnectError("Connection refused", request=_request()),
        httpx.ConnectTimeout("connect timed out", request=_request()),
    ],
    ids=["refused", "connect-timeout"],
)
async def test_post_that_never_reached_the_server_is_sent_again(
    mock_client: MockClientFactory, never_sent: Exception
) -> None:
    server = FaultServer([never_sent, CREATED])
    async with mock_client(server) as client:
        highlight = await client.create_highlight("The map is not the territory.")
    assert highlight.content == "The map is not the territory."
    assert server.count("POST") == 2
    assert server.sent[0].body == server.sent[1].body


async def test_connect_errors_give_up_after_the_retries(
    mock_client: MockClientFactory, sleeps: Sleeps
) -> None:
    server = FaultServer([httpx.ConnectError("Connection refused", request=_request())])
    async with mock_client(server, retry=RetryPolicy(max_retries=2)) as client:
        with pytest.raises(ScreviConnectionError) as caught:
            await client.create_tag("ideas")
    assert server.count() == 3
    assert len(sleeps.waits) == 2
    assert "Connection refused" in str(caught.value)


async def test_malformed_json_on_success_is_an_unexpected_response_not_a_retry(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer(
        [httpx.Response(200, text='{"data": [', headers={"content-type": "application/json"})]
    )
    async with mock_client(server) as client:
        with pytest.raises(UnexpectedResponseError) as caught:
            await client.list_highlights()
    assert server.count() == 1
    assert caught.value.status == 200


async def test_malformed_json_on_500_is_still_an_internal_error(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([httpx.Response(500, text='{"error": "bo')])
    async with mock_client(server, retry=RetryPolicy(max_retries=0)) as client:
        with pytest.raises(InternalServerError) as caught:
            await client.list_highlights()
    assert caught.value.code == "internal_error"


async def test_json_of_the_wrong_shape_is_an_unexpected_response(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([json_reply(200, {"data": [{"no_id": True}], "pagination": {}})])
    async with mock_client(server) as client:
        with pytest.raises(UnexpectedResponseError):
            await client.list_highlights()


async def test_a_created_answer_that_cannot_be_read_is_not_retry_advice(
    mock_client: MockClientFactory,
) -> None:
    """A 201 whose body the client cannot read means the write was probably done: the agent
    must be told to check, not to call again (a year-500 date once did this, and retries
    made duplicates)."""
    from screvi_mcp.server.errors import describe

    server = FaultServer([json_reply(201, {"data": {**HIGHLIGHT, "date": "500-01-01T00:00Z"}})])
    async with mock_client(server) as client:
        with pytest.raises(UnexpectedResponseError) as caught:
            await client.create_highlight("x")
        with pytest.raises(UnexpectedResponseError) as read:
            await client.get_highlight(HIGHLIGHT["id"])
    advice = describe(caught.value)
    assert "unknown" in advice and "list_highlights" in advice, advice
    assert "unknown" not in describe(read.value)
    assert len(server.sent) == 2


JSON = {"content-type": "application/json"}


async def chunked(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), 4096):
        yield data[start : start + 4096]


async def test_an_oversized_answer_is_not_read_whole(mock_client: MockClientFactory) -> None:
    big = {"data": [{**HIGHLIGHT, "content": "x" * 50_000}], "pagination": OK_PAGINATION}
    for reply in (
        json_reply(200, big),  # with a Content-Length
        httpx.Response(200, content=chunked(json.dumps(big).encode()), headers=JSON),  # chunked
    ):
        server = FaultServer([reply])
        async with mock_client(server, max_response_bytes=10_000) as client:
            with pytest.raises(UnexpectedResponseError) as caught:
                await client.list_highlights()
        assert "10000 bytes" in caught.value.message
        assert len(str(caught.value)) < 500
    # After a write, an answer too large to read leaves its outcome unknown: check first.
    server = FaultServer([json_reply(201, {"data": {**HIGHLIGHT, "note": "y" * 50_000}})])
    async with mock_client(server, max_response_bytes=10_000) as client:
        with pytest.raises(UnexpectedResponseError) as written:
            await client.create_highlight("x")
    from screvi_mcp.server.errors import describe

    advice = describe(written.value)
    assert "unknown" in advice and "list_highlights" in advice, advice


async def test_upstream_error_text_reaches_the_agent_capped(
    mock_client: MockClientFactory,
) -> None:
    from screvi_mcp.server.errors import describe

    flood = "the server says " + "blah " * 20_000
    server = FaultServer(
        [error_reply(422, "validation_failed", flood, fields={f"f{n}": flood for n in range(50)})]
    )
    async with mock_client(server) as client:
        with pytest.raises(ScreviAPIError) as caught:
            await client.create_highlight("x")
    advice = describe(caught.value)
    assert len(advice) < 5000, len(advice)  # 500 chars of message, 20 fields of 200
    assert advice.startswith("[validation_failed]") and "Next:" in advice
