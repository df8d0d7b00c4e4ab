"""URL validation, the duplicate key, short links, PDFs and social-post links (pure functions)."""

from __future__ import annotations

import pytest

from screvi_mcp.local.fetching.urls import (
    InvalidArticleURL,
    is_pdf_url,
    is_short_link,
    normalise_url,
    parse_social_post,
    validate_url,
)


@pytest.mark.parametrize(
    "variant",
    [
        "https://example.org/essays/reading-slowly",
        "HTTPS://Example.ORG/essays/reading-slowly",
        "https://example.org:443/essays/reading-slowly",
        "https://example.org/essays/reading-slowly/",
        "https://example.org/essays/reading-slowly#comments",
        "https://example.org/essays/reading-slowly?utm_source=x&utm_medium=email",
        "https://example.org/essays/reading-slowly?fbclid=abc&gclid=def&mc_cid=1",
        "https://example.org//essays//reading-slowly",
        "  https://example.org/essays/reading-slowly  ",
        "https://example.org/essays/reading%2Dslowly",
    ],
)
def test_variants_of_one_page_share_a_key(variant: str) -> None:
    assert normalise_url(variant) == "https://example.org/essays/reading-slowly"


def test_meaningful_differences_are_kept() -> None:
    key = normalise_url
    assert key("https://example.org/a?id=1") != key("https://example.org/a?id=2")
    assert key("https://example.org/A") != key("https://example.org/a")  # paths are case-sensitive
    assert key("http://example.org/a") != key("https://example.org/a")
    assert key("https://example.org:8443/a") == "https://example.org:8443/a"
    assert key("http://example.org:80/") == "http://example.org"
    assert key("https://example.org/a?b=2&a=1&utm_campaign=z") == "https://example.org/a?a=1&b=2"
    assert key("https://example.org/?q=") == "https://example.org?q="


def test_international_host_names_are_idna_encoded() -> None:
    assert normalise_url("https://Bücher.example/x") == "https://xn--bcher-kva.example/x"


def test_ipv6_literal_hosts_keep_brackets() -> None:
    assert normalise_url("http://[::1]:8080/a/") == "http://[::1]:8080/a"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "example.org/page",
        "ftp://example.org/file",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://",
        "https://user:secret@example.org/",
        "https://example.org/a b",
        "https://example.org:99999/",
        "https://example.org/" + "a" * 3000,
    ],
)
def test_invalid_urls_are_refused(bad: str) -> None:
    with pytest.raises(InvalidArticleURL):
        validate_url(bad)


def test_pdf_links_are_recognised_by_extension() -> None:
    assert is_pdf_url("https://example.org/papers/Attention.PDF")
    assert is_pdf_url("https://example.org/a.pdf?download=1")
    assert not is_pdf_url("https://example.org/pdf/viewer")


def test_short_links() -> None:
    assert is_short_link("https://bit.ly/3abc")
    assert is_short_link("https://t.co/xyz")
    assert not is_short_link("https://example.org/bit.ly")
    assert is_short_link("http://127.0.0.1:8000/r/1", frozenset({"127.0.0.1"}))


@pytest.mark.parametrize(
    ("url", "platform", "author", "post_id"),
    [
        ("https://x.com/jack/status/20", "x", "jack", "20"),
        ("https://twitter.com/jack/status/20?s=20&t=abc", "x", "jack", "20"),
        ("https://mobile.twitter.com/jack/status/20/photo/1", "x", "jack", "20"),
        ("https://x.com/i/web/status/1234", "x", "", "1234"),
        (
            "https://bsky.app/profile/grace.bsky.social/post/3kabc2xyz",
            "bluesky",
            "grace.bsky.social",
            "3kabc2xyz",
        ),
        (
            "https://bsky.app/profile/did:plc:abc123/post/3kabc2xyz",
            "bluesky",
            "did:plc:abc123",
            "3kabc2xyz",
        ),
        ("https://mastodon.social/@alan/111222333", "mastodon", "alan", "111222333"),
        ("https://hachyderm.io/@alan@mastodon.social/42", "mastodon", "alan@mastodon.social", "42"),
        ("https://mastodon.social/users/alan/statuses/42", "mastodon", "alan", "42"),
    ],
)
def test_social_post_links(url: str, platform: str, author: str, post_id: str) -> None:
    ref = parse_social_post(url)
    assert ref is not None
    assert (ref.platform, ref.author, ref.post_id) == (platform, author, post_id)


@pytest.mark.parametrize(
    "url",
    [
        "https://x.com/jack",
        "https://x.com/jack/likes",
        "https://twitter.com/search?q=status",
        "https://bsky.app/profile/grace.bsky.social",
        "https://mastodon.social/@alan",
        "https://medium.com/@writer/a-long-essay-title-1a2b3c4d5e6f",
        "https://example.org/status/123",
        "not a url",
    ],
)
def test_other_links_are_not_social_posts(url: str) -> None:
    assert parse_social_post(url) is None
