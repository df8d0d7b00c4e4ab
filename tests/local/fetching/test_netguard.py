"""The address guard.

Policy tests judge address *values* and send nothing. Every test that makes a request aims
only at loopback (127.0.0.0/8, ::1, names resolving there) with private networks NOT allowed,
so even a broken guard could not reach anything off this machine.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import httpx
import pytest
from fetching_site import LocalSite

from screvi_mcp.local.fetching.fetcher import BlockedURLError, Fetcher, FetchSettings
from screvi_mcp.local.fetching.netguard import (
    AddressPolicy,
    BlockedAddressError,
    GuardedTransport,
    IPAddress,
    env_allows_private_networks,
)

STRICT = AddressPolicy(allow_private=False)
RELAXED = AddressPolicy(allow_private=True)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.255.255.254",
        "::1",
        "0.0.0.0",
        "::",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",  # carrier-grade NAT
        "169.254.1.1",
        "169.254.169.254",
        "fe80::1",
        "fc00::1",
        "fd00:ec2::254",
        "224.0.0.1",
        "ff02::1",
        "240.0.0.1",
        "255.255.255.255",
        "::ffff:127.0.0.1",  # IPv4-mapped
        "::ffff:10.0.0.1",
        "64:ff9b::a9fe:a9fe",  # NAT64 form of 169.254.169.254
        "2002:7f00:1::1",  # 6to4 around 127.0.0.1
        "192.0.2.10",  # documentation ranges are not the internet either
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert STRICT.refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert STRICT.refusal(ipaddress.ip_address(address)) is None


def test_allowing_private_networks_still_refuses_metadata_and_multicast() -> None:
    assert RELAXED.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert RELAXED.refusal(ipaddress.ip_address("192.168.1.1")) is None
    for address in ("169.254.169.254", "fd00:ec2::254", "::ffff:169.254.169.254", "224.0.0.1"):
        assert RELAXED.refusal(ipaddress.ip_address(address)) is not None


def test_environment_switch() -> None:
    assert env_allows_private_networks({"SCREVI_ALLOW_PRIVATE_NETWORKS": "1"})
    assert env_allows_private_networks({"SCREVI_ALLOW_PRIVATE_NETWORKS": "true"})
    assert not env_allows_private_networks({"SCREVI_ALLOW_PRIVATE_NETWORKS": "0"})
    assert not env_allows_private_networks({})


def test_policy_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCREVI_ALLOW_PRIVATE_NETWORKS", "1")
    assert AddressPolicy.from_env().allow_private
    assert not AddressPolicy.from_env(allow_private=False).allow_private
    monkeypatch.delenv("SCREVI_ALLOW_PRIVATE_NETWORKS")
    assert not AddressPolicy.from_env().allow_private


def strict_fetcher() -> Fetcher:
    return Fetcher(AddressPolicy(allow_private=False), FetchSettings(total_timeout=10))


@pytest.mark.parametrize(
    "template",
    [
        "http://127.0.0.1:{port}/article",
        "http://localhost:{port}/article",
        "http://LOCALHOST.:{port}/article",
        "http://[::1]:{port}/article",
        "http://127.1:{port}/article",  # legacy short form, resolved by getaddrinfo
        "http://2130706433:{port}/article",  # 127.0.0.1 as one decimal number
        "http://[::ffff:127.0.0.1]:{port}/article",
        "http://0.0.0.0:{port}/article",
    ],
)
async def test_loopback_targets_are_refused_without_a_request(
    site: LocalSite, template: str
) -> None:
    url = template.format(port=site.port)
    async with strict_fetcher() as fetcher:
        with pytest.raises(BlockedURLError) as caught:
            await fetcher.fetch(url)
        with pytest.raises(BlockedURLError):
            await fetcher.resolve_redirects(url)
    assert caught.value.reason == "blocked_address"
    assert "refused" in caught.value.message
    assert site.requests == []


@dataclass(frozen=True, slots=True)
class LetIn(AddressPolicy):
    """The strict policy with exactly one loopback address let in: the redirector's."""

    exempt: frozenset[IPAddress] = frozenset()

    def refusal(self, address: IPAddress) -> str | None:
        if address in self.exempt:
            return None
        return AddressPolicy.refusal(self, address)


def letting_in(site: LocalSite) -> Fetcher:
    policy = LetIn(allow_private=False, exempt=frozenset({ipaddress.ip_address(site.host)}))
    return Fetcher(policy, FetchSettings(total_timeout=10))


async def test_a_redirect_into_loopback_is_refused(site: LocalSite, second_site: LocalSite) -> None:
    # second_site (127.0.0.2) is let in; it redirects to site (127.0.0.1), which is not.
    target = site.url("/article")
    start = second_site.url(f"/redirect-to?url={target}")
    async with letting_in(second_site) as fetcher:
        assert (await fetcher.fetch(second_site.url("/article"))).status == 200
        with pytest.raises(BlockedURLError) as caught:
            await fetcher.fetch(start)
        with pytest.raises(BlockedURLError):
            await fetcher.resolve_redirects(start)
    assert "127.0.0.1" in caught.value.message
    assert site.requests == []  # the guard stopped it although a server was listening there


async def test_a_redirect_to_localhost_is_refused(site: LocalSite, second_site: LocalSite) -> None:
    start = second_site.url(f"/redirect-to?url=http://localhost:{site.port}/article")
    async with letting_in(second_site) as fetcher:
        with pytest.raises(BlockedURLError):
            await fetcher.fetch(start)
    assert site.requests == []


async def test_the_connection_is_pinned_to_the_checked_address() -> None:
    # DNS rebinding: the first answer passes the check, a later one would not. The transport
    # must connect to the address it checked, never ask again.
    answers = [[ipaddress.ip_address("93.184.215.14")], [ipaddress.ip_address("127.0.0.1")]]
    calls: list[str] = []

    async def rebinding_resolver(host: str, port: int) -> list[IPAddress]:
        calls.append(host)
        return answers[min(len(calls) - 1, 1)]

    forwarded: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        forwarded.append(request)
        return httpx.Response(200, text="ok")

    transport = GuardedTransport(
        STRICT, inner=httpx.MockTransport(record), resolver=rebinding_resolver
    )
    async with httpx.AsyncClient(transport=transport) as client:
        response = await client.get("https://rebind.test/page?x=1")
        with pytest.raises(BlockedAddressError):
            await client.get("https://rebind.test/page?x=1")
    assert response.status_code == 200
    assert len(forwarded) == 1
    sent = forwarded[0]
    assert sent.url.host == "93.184.215.14"
    assert sent.url.raw_path == b"/page?x=1"
    assert sent.headers["Host"] == "rebind.test"
    assert sent.extensions["sni_hostname"] == "rebind.test"


async def test_any_refused_answer_refuses_the_name() -> None:
    async def mixed(host: str, port: int) -> list[IPAddress]:
        return [ipaddress.ip_address("93.184.215.14"), ipaddress.ip_address("127.0.0.1")]

    def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent")

    transport = GuardedTransport(STRICT, inner=httpx.MockTransport(never), resolver=mixed)
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(BlockedAddressError):
            await client.get("http://mixed.test/")


async def test_metadata_host_names_are_refused_before_dns() -> None:
    async def no_dns(host: str, port: int) -> list[IPAddress]:
        raise AssertionError("no DNS query may be made")

    def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent")

    transport = GuardedTransport(RELAXED, inner=httpx.MockTransport(never), resolver=no_dns)
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(BlockedAddressError):
            await client.get("http://metadata.google.internal/computeMetadata/v1/")


async def test_allowed_private_networks_reach_loopback(site: LocalSite) -> None:
    async with Fetcher(RELAXED) as fetcher:
        result = await fetcher.fetch(site.url("/article"))
    assert result.status == 200
    assert site.hits("/article") == 1


def test_only_refusals_the_switch_lifts_mention_it() -> None:
    policy = AddressPolicy()
    with pytest.raises(BlockedAddressError) as private:
        policy.check_addresses("intranet", [ipaddress.ip_address("10.1.2.3")])
    assert "SCREVI_ALLOW_PRIVATE_NETWORKS=1" in str(private.value)
    with pytest.raises(BlockedAddressError) as local_name:
        policy.check_host_name("wiki.local")
    assert "SCREVI_ALLOW_PRIVATE_NETWORKS=1" in str(local_name.value)
    with pytest.raises(BlockedAddressError) as metadata:
        policy.check_addresses("meta", [ipaddress.ip_address("169.254.169.254")])
    assert "SCREVI_ALLOW_PRIVATE_NETWORKS" not in str(metadata.value)  # never allowed
