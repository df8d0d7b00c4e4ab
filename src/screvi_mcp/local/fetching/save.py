"""POST /articles: what saving a URL does before the answer goes back.

Only bounded network steps happen here (resolving a short link, reading one social post),
each under `FetchSettings.save_timeout`. The page body is fetched later by the worker.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.fetching.fetcher import Fetcher, FetchError
from screvi_mcp.local.fetching.netguard import (
    AddressPolicy,
    BlockedAddressError,
    IPAddress,
    parse_ip_literal,
)
from screvi_mcp.local.fetching.social import (
    SocialEndpoints,
    SocialPost,
    SocialPostError,
    fetch_social_post,
)
from screvi_mcp.local.fetching.urls import (
    InvalidArticleURL,
    is_pdf_url,
    is_short_link,
    normalise_url,
    parse_social_post,
    validate_url,
)
from screvi_mcp.local.storage.library import Library

if TYPE_CHECKING:
    from screvi_mcp.local.fetching.pipeline import ArticleWorker

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """What POST /articles answers. For an article `source_id` is its own id."""

    kind: Literal["article", "highlight"]
    id: str
    source_id: str
    duplicate: bool
    parse_state: str | None  # None for highlights
    url: str  # the URL saved, after short-link resolution

    @property
    def status_code(self) -> int:
        return 200 if self.duplicate else 201

    def response_data(self) -> dict[str, Any]:
        """The `data` object of the response (spec, POST /articles rules 1, 2 and 4)."""
        if self.kind == "highlight":
            return {
                "kind": "highlight",
                "id": self.id,
                "source_id": self.source_id,
                "duplicate": self.duplicate,
            }
        return {"id": self.id, "parse_state": self.parse_state, "duplicate": self.duplicate}


# Called inside the save's write transaction with the outcome and the request's `tags`, for
# new and duplicate items alike (a duplicate gains the tags): how the route layer attaches
# tags with its own tag store. Raising rolls the whole save back.
TagHook = Callable[[sqlite3.Connection, SaveOutcome, list[str]], None]


async def resolve_short_link(fetcher: Fetcher, url: str) -> str:
    """Where a known short link leads; the URL itself when it is not one or cannot be followed."""
    if not is_short_link(url, fetcher.settings.short_link_hosts):
        return url
    try:
        async with asyncio.timeout(fetcher.settings.save_timeout):
            target = await fetcher.resolve_redirects(url)
    except TimeoutError:
        logger.info("resolving %s timed out; saving it as given", url)
        return url
    except FetchError as exc:
        logger.info("could not resolve %s (%s); saving it as given", url, exc.message)
        return url
    try:
        return validate_url(target)
    except ValueError:
        return url


def _numeric_address(host: str) -> IPAddress | None:
    """The address `host` names when it is written as numbers in any form a socket accepts
    (`127.1`, `2130706433`, `0x7f.1`...), found without asking DNS; else None."""
    literal = parse_ip_literal(host)
    if literal is not None:
        return literal
    try:
        infos = socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError):
        return None
    return ipaddress.ip_address(str(infos[0][4][0]).split("%", 1)[0])


def refuse_known_blocked(policy: AddressPolicy, url: str) -> None:
    """Raise InvalidArticleURL when the fetch policy refuses `url`'s host and that is known
    without the network: an address written as numbers, or a name never fetched (localhost,
    `*.local`, metadata hosts). The saver reads the refusal in the answer to the save, rather
    than from an article queued only to fail. A name whose DNS answer is refused is still
    refused when the page is fetched (the article fails with that reason)."""
    host = urlsplit(url).hostname or ""
    try:
        address = _numeric_address(host)
        if address is None:
            policy.check_host_name(host)
        else:
            policy.check_addresses(host, [address])
    except BlockedAddressError as refused:
        raise InvalidArticleURL(f"not saved: {refused}") from None


async def save_article(
    library: Library,
    url: str,
    tags: list[str] | None,
    *,
    fetcher: Fetcher,
    worker: ArticleWorker | None = None,
    tag_hook: TagHook | None = None,
    social_endpoints: SocialEndpoints | None = None,
) -> SaveOutcome:
    """Save `url`: a new queued article, an existing one (duplicate), or a social-post highlight.

    Saving the URL of a `failed` article again queues it again: the way to retry.

    Raises `InvalidArticleURL` (a ValueError; the route answers 422 on `url`) for anything
    but an absolute http(s) URL, and for an address the fetch policy refuses when that is
    known now (`refuse_known_blocked`). Otherwise whether the fetcher may reach the address
    is decided when the page is fetched: a refused address ends as a `failed` article with a
    clear `parse_error`.
    """
    given = validate_url(url)
    refuse_known_blocked(fetcher.policy, given)
    target = await resolve_short_link(fetcher, given)
    if target != given:
        refuse_known_blocked(fetcher.policy, target)

    post_ref = parse_social_post(target)
    if post_ref is not None:
        existing = await asyncio.to_thread(
            _find_social, library, post_ref.platform, post_ref.post_id, post_ref.host
        )
        if existing is not None:
            highlight_id, source_id = existing
            outcome = SaveOutcome("highlight", highlight_id, source_id, True, None, target)
            if tags and tag_hook is not None:
                await asyncio.to_thread(_run_hook, library, tag_hook, outcome, tags)
            return outcome
        try:
            async with asyncio.timeout(fetcher.settings.save_timeout):
                post = await fetch_social_post(fetcher, post_ref, social_endpoints)
        except (SocialPostError, TimeoutError) as exc:
            # Not readable as a post (deleted, private, not Mastodon after all, network
            # down): keep the link as an ordinary article rather than lose it.
            logger.info("saving %s as an article: %s", target, exc or "timed out")
        else:
            return await asyncio.to_thread(_save_post, library, post, tags, tag_hook)

    outcome = await asyncio.to_thread(_save_link, library, target, tags, tag_hook)
    if outcome.parse_state == "queued" and worker is not None:  # new, or a failed one retried
        worker.wake()
    return outcome


def _find_social(
    library: Library, platform: str, post_id: str, host: str
) -> tuple[str, str] | None:
    return article_rows.find_social_highlight(library.connection(), platform, post_id, host)


def _run_hook(library: Library, hook: TagHook, outcome: SaveOutcome, tags: list[str]) -> None:
    with library.write() as conn:
        hook(conn, outcome, tags)


def _save_post(
    library: Library, post: SocialPost, tags: list[str] | None, tag_hook: TagHook | None
) -> SaveOutcome:
    with library.write() as conn:
        # Checked again inside the transaction: another save of the same post may have won.
        existing = article_rows.find_social_highlight(
            conn, post.ref.platform, post.ref.post_id, post.ref.host
        )
        if existing is not None:
            outcome = SaveOutcome("highlight", existing[0], existing[1], True, None, post.url)
            seq = None
        else:
            source_id = article_rows.tweet_source_for(conn, post)
            highlight_id, seq = article_rows.insert_social_highlight(conn, source_id, post)
            outcome = SaveOutcome("highlight", highlight_id, source_id, False, None, post.url)
        if tags and tag_hook is not None:
            tag_hook(conn, outcome, tags)
    if seq is not None:
        library.notify_changed([seq])
    return outcome


def _save_link(
    library: Library, url: str, tags: list[str] | None, tag_hook: TagHook | None
) -> SaveOutcome:
    key = normalise_url(url)
    with library.write() as conn:
        existing = article_rows.find_duplicate(conn, [key])
        if existing is not None:
            article_id, state = existing
            if state == "failed" and article_rows.retry_failed(conn, article_id):
                state = "queued"
            outcome = SaveOutcome("article", article_id, article_id, True, state, url)
        else:
            article_id = article_rows.insert_article(conn, url, key, is_pdf=is_pdf_url(url))
            outcome = SaveOutcome("article", article_id, article_id, False, "queued", url)
        if tags and tag_hook is not None:
            tag_hook(conn, outcome, tags)
    return outcome
