"""The text and author of a single social post, from each network's public, keyless endpoint.

- X / Twitter: the oEmbed endpoint (`publish.twitter.com/oembed`), which answers for public
  posts without a key.
- Bluesky: the public AppView (`public.api.bsky.app`): resolve the handle, then `getPosts`.
- Mastodon: the post's own server, `GET /api/v1/statuses/{id}`.

All requests go through the caller's `Fetcher`, so the address guard, time and size limits
apply here as everywhere, and tests can serve these endpoints from a local server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from screvi_mcp.contract import MAX_HIGHLIGHT_TEXT
from screvi_mcp.local.fetching.extract import clean_text
from screvi_mcp.local.fetching.fetcher import Fetcher, FetchError
from screvi_mcp.local.fetching.urls import SocialPostRef
from screvi_mcp.local.storage import clock

logger = logging.getLogger(__name__)

MAX_POST_CHARS = MAX_HIGHLIGHT_TEXT  # a post becomes one highlight


@dataclass(frozen=True, slots=True)
class SocialEndpoints:
    x_oembed: str = "https://publish.twitter.com/oembed"
    bluesky_appview: str = "https://public.api.bsky.app"


@dataclass(frozen=True, slots=True)
class SocialPost:
    ref: SocialPostRef
    text: str
    author_handle: str  # "@jack", "@alice.bsky.social", "@alice@mastodon.social"
    author_name: str | None
    author_url: str | None
    url: str  # the post's own link
    posted_at: str | None  # stored timestamp format
    avatar_url: str | None = None

    @property
    def source_name(self) -> str:
        return self.author_name or self.author_handle


class SocialPostError(Exception):
    """The post could not be read (deleted, private, not a post after all, network down)."""


def html_to_text(fragment: str) -> str:
    """Plain text of a post's HTML: `<br>` as line breaks, paragraphs as blank lines."""
    import lxml.html

    if not fragment.strip():
        return ""
    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    for br in root.iter("br"):
        br.tail = "\n" + (br.tail or "")
    paragraphs = [p.text_content().strip() for p in root.iter("p")]
    whole = root.text_content().strip()
    text = "\n\n".join(p for p in paragraphs if p) if paragraphs else whole
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return clean_text("\n".join(lines).strip())


def _str(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _stamp(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return clock.normalise_timestamp(value)
    except ValueError:
        return None


def _limit(text: str) -> str:
    return text if len(text) <= MAX_POST_CHARS else text[: MAX_POST_CHARS - 1] + "…"


async def fetch_social_post(
    fetcher: Fetcher, ref: SocialPostRef, endpoints: SocialEndpoints | None = None
) -> SocialPost:
    """Read the post `ref` points at; SocialPostError when that is not possible."""
    endpoints = endpoints or SocialEndpoints()
    try:
        if ref.platform == "x":
            post = await _fetch_x(fetcher, ref, endpoints)
        elif ref.platform == "bluesky":
            post = await _fetch_bluesky(fetcher, ref, endpoints)
        else:
            post = await _fetch_mastodon(fetcher, ref)
    except FetchError as exc:
        raise SocialPostError(f"could not read the {ref.platform} post: {exc.message}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        logger.info("unexpected %s answer for %s: %r", ref.platform, ref.url, exc)
        raise SocialPostError(f"unexpected answer reading the {ref.platform} post") from None
    if not post.text.strip():
        raise SocialPostError(f"the {ref.platform} post has no text")
    return post


async def _fetch_x(fetcher: Fetcher, ref: SocialPostRef, endpoints: SocialEndpoints) -> SocialPost:
    import lxml.html

    user = ref.author or "i"
    post_url = f"https://twitter.com/{user}/status/{ref.post_id}"
    query = urlencode({"url": post_url, "omit_script": "true", "dnt": "true"})
    data = await fetcher.fetch_json(f"{endpoints.x_oembed}?{query}")
    markup = str(data["html"])
    root = lxml.html.fragment_fromstring(markup, create_parent="div")
    paragraph = next(iter(root.iter("p")), None)
    if paragraph is None:
        raise ValueError("no <p> in the oEmbed html")
    text = html_to_text(lxml.html.tostring(paragraph, encoding="unicode"))
    author_url = _str(data.get("author_url"))
    handle = urlsplit(author_url).path.strip("/").split("/")[0] if author_url else ref.author
    posted_at = None
    links = list(root.iter("a"))
    if links:
        try:
            day = datetime.strptime(links[-1].text_content().strip(), "%B %d, %Y")
            posted_at = clock.format_timestamp(day.replace(tzinfo=UTC))
        except ValueError:
            posted_at = None
    canonical = f"https://x.com/{handle or 'i/web'}/status/{ref.post_id}"
    return SocialPost(
        ref=ref,
        text=_limit(text),
        author_handle=f"@{handle}" if handle else "@unknown",
        author_name=_str(data.get("author_name")),
        author_url=f"https://x.com/{handle}" if handle else None,
        url=canonical,
        posted_at=posted_at,
    )


async def _fetch_bluesky(
    fetcher: Fetcher, ref: SocialPostRef, endpoints: SocialEndpoints
) -> SocialPost:
    base = endpoints.bluesky_appview.rstrip("/")
    actor = ref.author
    if not actor.startswith("did:"):
        resolved = await fetcher.fetch_json(
            f"{base}/xrpc/com.atproto.identity.resolveHandle?{urlencode({'handle': actor})}"
        )
        actor = str(resolved["did"])
    uri = f"at://{actor}/app.bsky.feed.post/{ref.post_id}"
    data = await fetcher.fetch_json(
        f"{base}/xrpc/app.bsky.feed.getPosts?uris={quote(uri, safe='')}"
    )
    posts = data["posts"]
    if not posts:
        raise SocialPostError("the Bluesky post was not found (deleted or private)")
    post = posts[0]
    author = post["author"]
    record = post["record"]
    handle = str(author.get("handle") or ref.author)
    return SocialPost(
        ref=ref,
        text=_limit(clean_text(str(record.get("text") or "").strip())),
        author_handle=f"@{handle}",
        author_name=_str(author.get("displayName")),
        author_url=f"https://bsky.app/profile/{handle}",
        url=f"https://bsky.app/profile/{handle}/post/{ref.post_id}",
        posted_at=_stamp(record.get("createdAt")),
        avatar_url=_str(author.get("avatar")),
    )


async def _fetch_mastodon(fetcher: Fetcher, ref: SocialPostRef) -> SocialPost:
    parts = urlsplit(ref.url)
    data = await fetcher.fetch_json(
        f"{parts.scheme}://{parts.netloc}/api/v1/statuses/{ref.post_id}"
    )
    if not isinstance(data, dict) or "account" not in data or "content" not in data:
        raise SocialPostError("the link does not lead to a Mastodon post")
    if isinstance(data.get("reblog"), dict):
        data = data["reblog"]
    account = data["account"]
    acct = str(account.get("acct") or account.get("username") or ref.author)
    handle = f"@{acct}" if "@" in acct else f"@{acct}@{ref.host}"
    text = html_to_text(str(data.get("content") or ""))
    spoiler = _str(data.get("spoiler_text"))
    if spoiler:
        text = f"{spoiler}\n\n{text}"
    return SocialPost(
        ref=ref,
        text=_limit(text),
        author_handle=handle,
        author_name=_str(account.get("display_name")),
        author_url=_str(account.get("url")),
        url=_str(data.get("url")) or ref.url,
        posted_at=_stamp(data.get("created_at")),
        avatar_url=_str(account.get("avatar")),
    )
