"""Reading single social posts. The networks' endpoints are served by the loopback site through
an injected transport and resolver: no DNS query and no request leaves this machine."""

from __future__ import annotations

import pytest
from fetching_site import LocalSite, LoopbackRouter, loopback_resolver

from screvi_mcp.local.fetching.fetcher import Fetcher, FetchSettings
from screvi_mcp.local.fetching.netguard import AddressPolicy
from screvi_mcp.local.fetching.social import (
    SocialPostError,
    fetch_social_post,
    html_to_text,
)
from screvi_mcp.local.fetching.urls import parse_social_post


def routed_fetcher(site: LocalSite) -> tuple[Fetcher, LoopbackRouter]:
    router = LoopbackRouter(site)
    fetcher = Fetcher(
        AddressPolicy(allow_private=True),
        FetchSettings(total_timeout=10),
        transport=router,
        resolver=loopback_resolver,
    )
    return fetcher, router


async def test_an_x_post_is_read_through_oembed(site: LocalSite) -> None:
    ref = parse_social_post("https://x.com/adalovelace/status/1234567890123456789?s=20")
    assert ref is not None
    fetcher, router = routed_fetcher(site)
    async with fetcher:
        post = await fetch_social_post(fetcher, ref)
    assert post.text == (
        "The engine weaves algebraic patterns\n"
        "just as the Jacquard loom weaves flowers and leaves. https://t.co/abc"
    )
    assert post.author_handle == "@adalovelace"
    assert post.author_name == "Ada Lovelace"
    assert post.author_url == "https://x.com/adalovelace"
    assert post.url == "https://x.com/adalovelace/status/1234567890123456789"
    assert post.posted_at == "2024-03-05T00:00:00.000000Z"
    assert router.seen[0].startswith("publish.twitter.com/oembed?url=")


async def test_a_bluesky_post_is_read_from_the_public_appview(site: LocalSite) -> None:
    ref = parse_social_post("https://bsky.app/profile/grace.bsky.social/post/3kabc2xyz")
    assert ref is not None
    fetcher, router = routed_fetcher(site)
    async with fetcher:
        post = await fetch_social_post(fetcher, ref)
    assert post.text == "It is easier to ask forgiveness than it is to get permission."
    assert post.author_handle == "@grace.bsky.social"
    assert post.author_name == "Grace Hopper"
    assert post.posted_at == "2024-05-01T12:30:00.000000Z"
    assert post.avatar_url == "https://cdn.example/avatar.jpg"
    assert [s.split("?")[0] for s in router.seen] == [
        "public.api.bsky.app/xrpc/com.atproto.identity.resolveHandle",
        "public.api.bsky.app/xrpc/app.bsky.feed.getPosts",
    ]


async def test_a_mastodon_post_is_read_from_its_server(site: LocalSite) -> None:
    ref = parse_social_post("https://mastodon.example/@alan/111222333444555666")
    assert ref is not None
    fetcher, router = routed_fetcher(site)
    async with fetcher:
        post = await fetch_social_post(fetcher, ref)
    assert post.text == "Machines take me by surprise\nwith great frequency.\n\nSecond para."
    assert post.author_handle == "@alan@mastodon.example"
    assert post.author_name == "Alan Turing"
    assert post.url == "https://mastodon.example/@alan/111222333444555666"
    assert router.seen == ["mastodon.example/api/v1/statuses/111222333444555666"]


async def test_a_link_that_only_looks_like_a_mastodon_post(site: LocalSite) -> None:
    ref = parse_social_post(site.url("/@someone/999"))
    assert ref is not None and ref.platform == "mastodon"
    async with Fetcher(AddressPolicy(allow_private=True)) as fetcher:
        with pytest.raises(SocialPostError):
            await fetch_social_post(fetcher, ref)


def test_post_html_to_text() -> None:
    assert html_to_text("<p>a<br>b</p><p>c &amp; d</p>") == "a\nb\n\nc & d"
    assert html_to_text("plain") == "plain"
    assert html_to_text("") == ""
