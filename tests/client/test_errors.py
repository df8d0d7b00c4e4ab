"""Error responses become one exception class per spec code; the key never leaks."""

from __future__ import annotations

import logging

import httpx
import pytest
from client_testkit import (
    LEGACY_KEY,
    SCOPED_KEY,
    ClientFactory,
    FaultServer,
    MockClientFactory,
    error_reply,
    json_reply,
)

from screvi_mcp.client import (
    ConflictError,
    InsufficientScopeError,
    InternalServerError,
    InvalidApiKeyError,
    InvalidParameterError,
    LegacyKeyReadOnlyError,
    MissingApiKeyError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitedError,
    RetryPolicy,
    ScreviAPIError,
    ScreviClient,
    ScreviConnectionError,
    SubscriptionRequiredError,
    UnexpectedResponseError,
    ValidationFailedError,
)

TAGS = json_reply(200, {"data": []})

SPEC_CODES = [
    (400, "invalid_parameter", InvalidParameterError),
    (401, "missing_api_key", MissingApiKeyError),
    (401, "invalid_api_key", InvalidApiKeyError),
    (403, "legacy_key_read_only", LegacyKeyReadOnlyError),
    (403, "insufficient_scope", InsufficientScopeError),
    (403, "subscription_required", SubscriptionRequiredError),
    (404, "not_found", NotFoundError),
    (409, "conflict", ConflictError),
    (413, "payload_too_large", PayloadTooLargeError),
    (422, "validation_failed", ValidationFailedError),
    (429, "rate_limited", RateLimitedError),
    (500, "internal_error", InternalServerError),
]


@pytest.mark.parametrize(("status", "code", "cls"), SPEC_CODES, ids=[c for _, c, _ in SPEC_CODES])
async def test_each_spec_code_raises_its_own_class(
    mock_client: MockClientFactory, status: int, code: str, cls: type[ScreviAPIError]
) -> None:
    server = FaultServer([error_reply(status, code, f"{code} happened")])
    async with mock_client(server, retry=RetryPolicy(max_retries=0)) as client:
        with pytest.raises(ScreviAPIError) as caught:
            await client.list_tags()
    error = caught.value
    assert type(error) is cls
    assert (error.status, error.code, error.message) == (status, code, f"{code} happened")
    assert error.from_server


async def test_validation_failed_carries_fields(mock_client: MockClientFactory) -> None:
    fields = {"highlights[3].content": "required", "highlights[7].location": "must be >= 0"}
    server = FaultServer(
        [error_reply(422, "validation_failed", "Validation failed", fields=fields)]
    )
    async with mock_client(server) as client:
        with pytest.raises(ValidationFailedError) as caught:
            await client.create_highlights_bulk([{"content": "a"}])
    assert caught.value.fields == fields
    assert "highlights[3].content: required" in str(caught.value)


async def test_invalid_parameter_carries_fields(mock_client: MockClientFactory) -> None:
    server = FaultServer([error_reply(400, "invalid_parameter", "Bad q", fields={"q": "invalid"})])
    async with mock_client(server) as client:
        with pytest.raises(InvalidParameterError) as caught:
            await client.search("anything")
    assert caught.value.fields == {"q": "invalid"}


async def test_conflict_carries_the_existing_source_id(mock_client: MockClientFactory) -> None:
    existing = "33333333-3333-4333-8333-333333333333"
    server = FaultServer([error_reply(409, "conflict", "exists", source_id=existing)])
    async with mock_client(server) as client:
        with pytest.raises(ConflictError) as caught:
            await client.create_source("My notes", "self")
    assert caught.value.source_id == existing


async def test_rate_limited_carries_retry_after(mock_client: MockClientFactory) -> None:
    server = FaultServer([error_reply(429, "rate_limited", headers={"Retry-After": "12"})])
    async with mock_client(server, retry=RetryPolicy(max_retries=0)) as client:
        with pytest.raises(RateLimitedError) as caught:
            await client.list_tags()
    assert caught.value.retry_after == 12.0


async def test_unknown_code_keeps_the_code_and_falls_back_on_the_status(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer(
        [error_reply(403, "account_suspended", "suspended"), error_reply(404, "gone_forever")]
    )
    async with mock_client(server) as client:
        with pytest.raises(ScreviAPIError) as first:
            await client.list_tags()
        with pytest.raises(NotFoundError) as second:
            await client.list_tags()
    assert type(first.value) is ScreviAPIError
    assert (first.value.status, first.value.code) == (403, "account_suspended")
    assert second.value.code == "gone_forever"


async def test_error_body_without_code_is_an_unexpected_response(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([httpx.Response(418, json={"message": "teapot"})])
    async with mock_client(server) as client:
        with pytest.raises(UnexpectedResponseError) as caught:
            await client.list_tags()
    assert caught.value.status == 418


async def test_empty_error_body_is_described(mock_client: MockClientFactory) -> None:
    server = FaultServer([httpx.Response(503)])
    async with mock_client(server, retry=RetryPolicy(max_retries=0)) as client:
        with pytest.raises(UnexpectedResponseError) as caught:
            await client.list_tags()
    assert caught.value.status == 503
    assert "empty body" in caught.value.message


# The key --------------------------------------------------------------------------------


async def test_the_key_is_sent_in_x_api_key_and_nowhere_else(
    mock_client: MockClientFactory,
) -> None:
    server = FaultServer([TAGS])
    async with mock_client(server) as client:
        await client.list_tags()
    sent = server.sent[0]
    assert sent.headers["X-API-Key"] == SCOPED_KEY
    assert SCOPED_KEY not in str(httpx.URL(sent.path, params=sent.params))
    assert "authorization" not in sent.headers


async def test_key_never_appears_in_repr_errors_or_logs(
    mock_client: MockClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echoing = error_reply(
        401, "invalid_api_key", f"Key {SCOPED_KEY} is unknown", fields={"key": SCOPED_KEY}
    )
    server = FaultServer(
        [
            httpx.ConnectError(f"refused for {SCOPED_KEY}"),
            error_reply(500, "internal_error", f"crash near {SCOPED_KEY}"),
            echoing,
            httpx.ConnectError(f"refused for {SCOPED_KEY}"),
        ]
    )
    texts: list[str] = []
    async with mock_client(server, retry=RetryPolicy(max_retries=1)) as client:
        texts += [repr(client), str(client), repr(client._auth), repr(client._http.headers)]
        with pytest.raises(InternalServerError) as crashed:
            await client.list_tags()  # refused, then a 500, then out of retries
        texts += [str(crashed.value), repr(crashed.value)]
        with pytest.raises(InvalidApiKeyError) as invalid:
            await client.create_tag("x")
        texts += [str(invalid.value), repr(invalid.value), str(invalid.value.fields)]
        with pytest.raises(ScreviConnectionError) as refused:
            await client.delete_tag("t")
        texts += [str(refused.value), repr(refused.value)]
    texts += [record.getMessage() for record in caplog.records]
    assert "sk_live_***" in texts[0]
    assert all(SCOPED_KEY not in text for text in texts)
    assert server.count() == 5


async def test_deprecation_header_is_logged_once(
    mock_client: MockClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    deprecated = json_reply(200, {"data": []}, headers={"Deprecation": "true"})
    server = FaultServer([deprecated])
    async with mock_client(server, api_key=LEGACY_KEY) as client:
        for _ in range(3):
            await client.list_tags()
    warnings = [r for r in caplog.records if "Deprecation" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING
    assert LEGACY_KEY not in warnings[0].getMessage()


@pytest.mark.parametrize("method", ["create_highlight", "delete_tag", "update_article"])
async def test_legacy_key_is_known_read_only_before_any_write(
    mock_client: MockClientFactory, method: str
) -> None:
    server = FaultServer([TAGS])
    async with mock_client(server, api_key=LEGACY_KEY) as client:
        assert client.read_only
        with pytest.raises(LegacyKeyReadOnlyError) as caught:
            if method == "create_highlight":
                await client.create_highlight("x")
            elif method == "delete_tag":
                await client.delete_tag("t")
            else:
                await client.update_article("a", favorite=True)
        await client.list_tags()  # reads still work
    assert caught.value.status == 403
    assert caught.value.code == "legacy_key_read_only"
    assert not caught.value.from_server
    assert [s.method for s in server.sent] == ["GET"]


def test_scoped_key_is_not_read_only_and_no_key_is_not_either() -> None:
    assert not ScreviClient(SCOPED_KEY).read_only
    assert not ScreviClient(None).read_only
    assert ScreviClient(LEGACY_KEY).read_only


async def test_no_key_sends_no_key_header(mock_client: MockClientFactory) -> None:
    server = FaultServer([error_reply(401, "missing_api_key")])
    async with mock_client(server, api_key=None) as client:
        with pytest.raises(MissingApiKeyError):
            await client.list_tags()
    assert "x-api-key" not in server.sent[0].headers


# Over a socket only: in-process, the client paces itself to the app's limit and never gets
# a 429.
@pytest.mark.parametrize("backend", ["socket"], indirect=True)
async def test_a_429_carries_the_servers_real_limit(connect: ClientFactory) -> None:
    from screvi_mcp.server.errors import describe

    async with connect(server_rate_limit=2) as client:
        await client.list_tags()
        await client.list_tags()
        with pytest.raises(RateLimitedError) as caught:
            await client.list_tags()
    assert caught.value.limit == 2
    message = describe(caught.value)
    assert "(2 requests per minute per key)" in message and "100" not in message
