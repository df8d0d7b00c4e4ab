"""Client-side rate limiting: concurrent callers sharing a key stay under the rate."""

from __future__ import annotations

import time
from collections import deque

import anyio
import httpx
import pytest
from client_testkit import BASE_URL, HIGHLIGHT, SCOPED_KEY

from screvi_mcp.client import RateLimitedError, RateLimiter, RetryPolicy, ScreviClient
from screvi_mcp.client.ratelimit import RateLimitWaitTooLong, share_key, shared_limiter
from screvi_mcp.server.errors import describe


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_reservations_never_put_more_than_rate_grants_in_a_window() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3, 10.0, clock=clock)
    # Seven callers at once: three now, three after one window, one after two.
    delays = [limiter.reserve() for _ in range(7)]
    assert delays == [0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 20.0]
    clock.now += 25.0
    # Long idle: the next caller goes at once.
    assert limiter.reserve() == 0.0


def test_grants_are_spread_by_the_sliding_window_not_a_fixed_one() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2, 10.0, clock=clock)
    assert limiter.reserve() == 0.0
    clock.now += 6.0
    assert limiter.reserve() == 0.0
    clock.now += 1.0  # t=7: two grants in [0, 7]; the next may go at t=10
    assert limiter.reserve() == pytest.approx(3.0)
    assert limiter.reserve() == pytest.approx(9.0)  # t=16, ten after the grant at t=6


def test_invalid_rates_are_refused() -> None:
    with pytest.raises(ValueError):
        RateLimiter(0)
    with pytest.raises(ValueError):
        RateLimiter(10, window=0)


def test_clients_of_one_key_share_one_limiter() -> None:
    a = ScreviClient(SCOPED_KEY, base_url=BASE_URL, rate_limit=7, rate_window=1.0)
    b = ScreviClient(SCOPED_KEY, base_url=BASE_URL + "/", rate_limit=7, rate_window=1.0)
    other = ScreviClient("sk_live_other", base_url=BASE_URL, rate_limit=7, rate_window=1.0)
    assert a._limiter is b._limiter
    assert a._limiter is not other._limiter
    assert shared_limiter(SCOPED_KEY, BASE_URL, 7, 1.0) is a._limiter


CALLS = 180


class WindowedServer:
    """A server that enforces `rate` per sliding `window` itself and answers 429 beyond it.

    Its window is shorter than the client's: arrival times trail the client's grant times by
    scheduling delays, and a burst of requests granted together takes a while to get through
    a loaded CI machine, so the slack keeps the test about the limiter's logic and not about
    the event loop's punctuality. Without a limiter all the calls arrive within a fraction of
    this window, so the slack cannot hide a broken one.
    """

    SLACK = 0.4

    def __init__(self, rate: int, window: float) -> None:
        self.rate = rate
        self.window = window * self.SLACK
        self.arrivals: list[float] = []
        self.recent: deque[float] = deque()
        self.refused = 0
        self.served = 0

    def handle(self, request: httpx.Request) -> httpx.Response:
        now = time.monotonic()
        self.arrivals.append(now)
        while self.recent and self.recent[0] <= now - self.window:
            self.recent.popleft()
        if len(self.recent) >= self.rate:
            self.refused += 1
            return httpx.Response(
                429,
                json={"error": "slow down", "code": "rate_limited"},
                headers={"Retry-After": "5"},
            )
        self.recent.append(now)
        self.served += 1
        return httpx.Response(200, json={"data": {**HIGHLIGHT, "id": f"h{self.served}"}})


async def test_180_concurrent_calls_stay_under_the_rate_and_all_complete() -> None:
    # 3600/min in bursts of 60: 180 calls take about 2.5 s. The server's window is 0.4 of the
    # client's, leaving 0.6 s for a scheduling stall: at 0.6 (0.4 s of slack) a burst slowed
    # by a busy machine, two test workers on two cores, still ran into the next window once.
    # Without a limiter 61 calls arrive well within 0.4 s, so a broken one still fails.
    rate, window = 60, 1.0
    server = WindowedServer(rate, window)
    limiter = RateLimiter(rate, window)
    no_retries = RetryPolicy(max_retries=0)
    transport = httpx.MockTransport(server.handle)
    # Two clients sharing the key (and so the limiter), as two agents in one process would.
    clients = [
        ScreviClient(
            SCOPED_KEY,
            base_url=BASE_URL,
            transport=transport,
            rate_limiter=limiter,
            retry=no_retries,
        )
        for _ in range(2)
    ]
    results: list[str] = []

    async def call(i: int) -> None:
        highlight = await clients[i % 2].get_highlight(f"id-{i}")
        results.append(highlight.id)

    async with anyio.create_task_group() as tg:
        for i in range(CALLS):
            tg.start_soon(call, i)
    for client in clients:
        await client.aclose()

    assert server.refused == 0
    assert len(results) == CALLS
    assert len(set(results)) == CALLS
    arrivals = sorted(server.arrivals)
    assert len(arrivals) == CALLS
    # Any `rate + 1` consecutive arrivals span at least (almost) one window.
    spans = [arrivals[i + rate] - arrivals[i] for i in range(len(arrivals) - rate)]
    assert min(spans) >= window * WindowedServer.SLACK


# A wait cap and a fair share: no caller queues for minutes or starves the others ------------


def test_a_slot_beyond_the_wait_cap_is_refused_and_not_taken() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3, 60.0, clock=clock)
    for _ in range(3):
        assert limiter.reserve(max_wait=5.0) == 0.0
    with pytest.raises(RateLimitWaitTooLong) as refused:
        limiter.reserve(max_wait=5.0)
    assert refused.value.retry_after == pytest.approx(60.0)
    clock.now += 57.0  # the refusal took no slot: three seconds before a slot, it waits them
    assert limiter.reserve(max_wait=5.0) == pytest.approx(3.0)


def test_a_busy_session_cannot_starve_another() -> None:
    clock = FakeClock()
    limiter = RateLimiter(4, 10.0, clock=clock)
    with share_key("greedy"):
        assert [limiter.reserve(max_wait=30.0) for _ in range(4)] == [0.0] * 4
        assert limiter.reserve(max_wait=30.0) == pytest.approx(10.0)  # alone: it may queue
    clock.now += 1.0
    with share_key("polite"):
        polite = limiter.reserve(max_wait=30.0)  # gets the next slot after the greedy's queue
    with share_key("greedy"):  # over its half of the window: refused at once, no slot taken
        for _ in range(5):
            with pytest.raises(RateLimitWaitTooLong) as refused:
                limiter.reserve(max_wait=30.0)
            assert refused.value.over_share
    with share_key("polite"):
        second = limiter.reserve(max_wait=30.0)
    assert polite == pytest.approx(9.0) and second == pytest.approx(9.0)


async def test_a_call_over_the_wait_cap_is_rate_limited_at_once() -> None:
    requests: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(request.url.path)
        return httpx.Response(200, json={"data": []})

    slept: list[float] = []

    async def record(seconds: float) -> None:
        slept.append(seconds)

    limiter = RateLimiter(2, 60.0, sleep=record)
    async with ScreviClient(
        SCOPED_KEY,
        base_url=BASE_URL,
        transport=httpx.MockTransport(answer),
        rate_limiter=limiter,
        max_rate_wait=3.0,
        retry=RetryPolicy(max_retries=0),
    ) as client:
        await client.list_tags()
        await client.list_tags()
        with pytest.raises(RateLimitedError) as caught:
            await client.list_tags()
    assert len(requests) == 2 and slept == []
    assert caught.value.retry_after is not None and 55 <= caught.value.retry_after <= 60
    assert not caught.value.from_server
    advice = describe(caught.value)
    assert advice.startswith("[rate_limited]") and "Next: wait" in advice


def test_a_polite_session_gets_its_share_beside_four_greedy_ones() -> None:
    """Four sessions calling as fast as they may and one asking 20 a minute: the polite one
    got 2 of 48 calls, refused as "over its fair share" though it had used none. Every
    session seen in the window now has its own share, and a refusal says whose share it is."""
    clock = FakeClock()
    limiter = RateLimiter(100, 60.0, clock=clock)
    granted = asked = 0
    refusals: list[RateLimitWaitTooLong] = []
    for step in range(480):  # two minutes in quarter seconds
        for greedy in range(4):
            with share_key(f"greedy-{greedy}"):
                for _ in range(3):
                    try:
                        limiter.reserve(max_wait=5.0)
                    except RateLimitWaitTooLong:
                        break
        if step % 12 == 0:  # every three seconds: 20 a minute
            asked += 1
            with share_key("polite"):
                try:
                    limiter.reserve(max_wait=5.0)
                    granted += 1
                except RateLimitWaitTooLong as refused:
                    refusals.append(refused)
        clock.now += 0.25
    assert asked == 40 and granted >= 38
    assert not any(refused.over_share for refused in refusals)  # it never used its share


def test_a_refusal_over_the_share_says_how_the_limit_is_shared() -> None:
    clock = FakeClock()
    limiter = RateLimiter(4, 10.0, clock=clock)
    with share_key("other"):
        limiter.reserve(max_wait=30.0)
    with share_key("busy"):
        limiter.reserve(max_wait=30.0)
        limiter.reserve(max_wait=30.0)
        with pytest.raises(RateLimitWaitTooLong) as refused:
            limiter.reserve(max_wait=30.0)
    assert refused.value.over_share
    assert (refused.value.used, refused.value.share, refused.value.sessions) == (2, 2, 2)
