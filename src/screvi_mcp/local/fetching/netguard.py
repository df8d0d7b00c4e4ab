"""Which addresses the fetcher may connect to, and a transport that enforces it.

Saving an article makes this process fetch a URL somebody else chose. Without a guard that is
a server-side request forgery hole: `http://169.254.169.254/` reads cloud credentials,
`http://localhost:6379/` talks to local services. The policy is checked on the addresses a
host name *resolves to* (so `localhost`, `127.1` or a public name pointing at 10.0.0.1 are all
caught), and `GuardedTransport` then connects to exactly the address it checked, so a second
DNS answer (DNS rebinding) cannot slip a different address in between check and connect.
Every request goes through the transport, so every redirect hop is checked the same way.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]

ALLOW_PRIVATE_ENV = "SCREVI_ALLOW_PRIVATE_NETWORKS"

# Cloud metadata services. Refused even when private networks are allowed: a self-hosted
# library that may read an intranet page still has no business reading instance credentials.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, ...
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.123",  # AWS time sync
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
        "fd00:ec2::254",  # AWS IPv6
        "fd00:ec2::23",
    )
)
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "metadata.azure.internal"})

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


ALLOW_PRIVATE_HINT = (
    f"start the server with {ALLOW_PRIVATE_ENV}=1 (or `screvi-mcp api --allow-private-networks`)"
)


class BlockedAddressError(httpx.TransportError):
    """The request's host is, or resolves to, an address the policy refuses."""

    def __init__(
        self, host: str, address: str | None, reason: str, *, allowable: bool = False
    ) -> None:
        self.host = host
        self.address = address
        self.reason = reason
        where = host if address is None or address == host else f"{host} ({address})"
        # Said where the refusal is read (save_article, the article's parse error): a user
        # who means to save an intranet or local page learns the switch from the message.
        hint = f"; to allow local and private addresses, {ALLOW_PRIVATE_HINT}" if allowable else ""
        super().__init__(f"refused to connect to {where}: {reason}{hint}")


def env_allows_private_networks(environ: dict[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(ALLOW_PRIVATE_ENV, "")
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, Teredo, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    # IPv4-compatible (deprecated ::a.b.c.d); `::` and `::1` are handled as themselves.
    if int(address) >> 32 == 0 and int(address) > 1:
        return ipaddress.IPv4Address(int(address))
    return None


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Refuses non-public addresses unless `allow_private`; metadata addresses always."""

    allow_private: bool = False

    @classmethod
    def from_env(cls, allow_private: bool | None = None) -> AddressPolicy:
        """The policy asked for by a flag, else by `SCREVI_ALLOW_PRIVATE_NETWORKS`."""
        if allow_private is None:
            allow_private = env_allows_private_networks()
        return cls(allow_private=allow_private)

    def refusal(self, address: IPAddress) -> str | None:
        """Why `address` may not be reached under this policy, or None when it may."""
        if address in METADATA_ADDRESSES:
            return "it is a cloud metadata address"
        if isinstance(address, ipaddress.IPv6Address):
            inner = _embedded_ipv4(address)
            if inner is not None:
                reason = self.refusal(inner)
                return None if reason is None else f"it embeds {inner}, and {reason}"
            if address.scope_id:
                return None if self.allow_private else "it is a scoped (link-local) address"
        if address.is_unspecified:
            return "it is an unspecified address"
        if address.is_multicast:
            return "it is a multicast address"
        if self.allow_private:
            return None
        if address.is_loopback:
            return "it is a loopback address"
        if address.is_link_local:
            return "it is a link-local address"
        if address.is_private:
            return "it is a private-network address"
        if address.is_reserved:
            return "it is a reserved address"
        if not address.is_global:
            return "it is not a public internet address"
        return None

    def check_host_name(self, host: str) -> None:
        """Refuse names that are never fetched, before any DNS query is made for them."""
        name = host.lower().rstrip(".")
        if name in METADATA_HOSTS:
            raise BlockedAddressError(host, None, "it is a cloud metadata host")
        if self.allow_private:
            return
        if name == "localhost" or name.endswith((".localhost", ".local", ".internal")):
            raise BlockedAddressError(host, None, "it is a local host name", allowable=True)

    def check_addresses(self, host: str, addresses: list[IPAddress]) -> None:
        """Raise BlockedAddressError when any address is refused (or there are none)."""
        if not addresses:
            raise BlockedAddressError(host, None, "the name did not resolve to any address")
        for address in addresses:
            reason = self.refusal(address)
            if reason is not None:
                allowable = AddressPolicy(allow_private=True).refusal(address) is None
                raise BlockedAddressError(host, str(address), reason, allowable=allowable)


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address when `host` is an IP literal in canonical form (brackets allowed)."""
    text = host.strip("[]")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address the system resolver gives for `host` (order kept, duplicates dropped).

    `getaddrinfo` also understands the legacy IPv4 forms (`127.1`, `2130706433`, `0x7f.1`) that
    `ipaddress` rejects, so those are resolved here to the address a socket would really use.
    """
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise httpx.ConnectError(f"could not resolve {host}: {exc.strerror or exc}") from None
    seen: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        raw = str(sockaddr[0]).split("%", 1)[0]
        address = ipaddress.ip_address(raw)
        if address not in seen:
            seen.append(address)
    return seen


class GuardedTransport(httpx.AsyncBaseTransport):
    """Checks a request's destination against the policy, then connects to that very address.

    The request is re-addressed to the checked IP; the `Host` header and the TLS server name
    (`sni_hostname`, which is also what the certificate is verified against) keep the original
    host, so virtual hosting and HTTPS work as before. `inner` does the actual I/O: by default
    a plain `httpx.AsyncHTTPTransport`; tests pass one that serves from a local server.
    """

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        inner: httpx.AsyncBaseTransport | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        self.policy = policy
        # No keep-alive: the pool keys connections by the pinned IP, so a kept connection whose
        # TLS session was verified for one host name could otherwise carry another name's
        # request to the same address. A fetcher gains little from reuse anyway.
        self.inner = (
            inner
            if inner is not None
            else httpx.AsyncHTTPTransport(
                retries=0, limits=httpx.Limits(max_keepalive_connections=0)
            )
        )
        self.resolver: Resolver = resolver if resolver is not None else system_resolver

    async def resolve_checked(self, host: str, port: int) -> list[IPAddress]:
        """The addresses of `host`, after the policy accepted every one of them."""
        literal = parse_ip_literal(host)
        if literal is not None:
            addresses = [literal]
        else:
            self.policy.check_host_name(host)
            addresses = await self.resolver(host, port)
        self.policy.check_addresses(host, addresses)
        return addresses

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        addresses = await self.resolve_checked(host, port)
        last_error: httpx.TransportError | None = None
        for address in addresses:
            pinned = url.copy_with(host=str(address))
            extensions = dict(request.extensions)
            if url.scheme == "https" and parse_ip_literal(host) is None:
                extensions.setdefault("sni_hostname", host)
            headers = request.headers.copy()
            headers["Host"] = url.netloc.decode("ascii")
            forwarded = httpx.Request(
                request.method,
                pinned,
                headers=headers,
                stream=request.stream,
                extensions=extensions,
            )
            try:
                return await self.inner.handle_async_request(forwarded)
            except httpx.ConnectError as exc:
                # Only connecting failed, so nothing was sent: the next checked address may work.
                logger.debug("connect to %s (%s) failed: %s", host, address, exc)
                last_error = exc
        assert last_error is not None
        raise last_error

    async def aclose(self) -> None:
        await self.inner.aclose()
