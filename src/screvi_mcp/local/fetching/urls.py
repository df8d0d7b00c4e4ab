"""URLs as the article library sees them: validation, the duplicate key, kinds of link.

`normalise_url` produces the key two saves of "the same page" share: it is never fetched and
never shown, so it may drop things a browser would keep (fragments, tracking parameters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

MAX_URL_LENGTH = 2048

_DEFAULT_PORTS = {"http": 80, "https": 443}

# Query parameters that only say where a click came from. Exact names, then prefixes.
_TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "ttclid",
        "li_fat_id",
        "igshid",
        "igsh",
        "mc_cid",
        "mc_eid",
        "mkt_tok",
        "_hsenc",
        "_hsmi",
        "__hssc",
        "__hstc",
        "__hsfp",
        "hsctatracking",
        "oly_anon_id",
        "oly_enc_id",
        "rb_clickid",
        "s_cid",
        "vero_conv",
        "vero_id",
        "wickedid",
        "ref_src",
        "ref_url",
        "spm",
        "si",
        "_ga",
        "_gl",
    }
)
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "ga_", "hmb_", "itm_")

# Hosts whose links exist only to redirect elsewhere: resolved before the duplicate check.
SHORT_LINK_HOSTS = frozenset(
    {
        "bit.ly",
        "bitly.com",
        "j.mp",
        "t.co",
        "tinyurl.com",
        "goo.gl",
        "ow.ly",
        "buff.ly",
        "lnkd.in",
        "dlvr.it",
        "is.gd",
        "v.gd",
        "trib.al",
        "amzn.to",
        "rebrand.ly",
        "cutt.ly",
        "shorturl.at",
        "t.ly",
        "tiny.cc",
        "s.id",
        "bit.do",
        "fb.me",
        "wp.me",
        "ift.tt",
        "flip.it",
        "apple.co",
        "spoti.fi",
        "substack.com/redirect",
        "tr.im",
        "rb.gy",
        "shor.by",
        "qr.ae",
        "bsky.app/l",
        "nyti.ms",
        "wapo.st",
        "econ.st",
        "reut.rs",
        "bbc.in",
        "cnn.it",
        "on.ft.com",
        "hubs.ly",
        "hubs.la",
        "mailchi.mp",
        "eepurl.com",
        "link.medium.com",
        "page.link",
    }
)


class InvalidArticleURL(ValueError):
    """The URL cannot be saved: not an absolute http(s) URL, too long, or malformed."""


def validate_url(url: str) -> str:
    """The URL, stripped, when it is an absolute http(s) URL with a host; else InvalidArticleURL."""
    if not isinstance(url, str):
        raise InvalidArticleURL("must be a string")
    text = url.strip()
    if not text:
        raise InvalidArticleURL("must not be empty")
    if len(text) > MAX_URL_LENGTH:
        raise InvalidArticleURL(f"must be at most {MAX_URL_LENGTH} characters")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise InvalidArticleURL("must not contain spaces or control characters")
    try:
        parts = urlsplit(text)
        port = parts.port  # raises ValueError on a bad port
    except ValueError as exc:
        raise InvalidArticleURL(f"is not a valid URL ({exc})") from None
    if parts.scheme.lower() not in _DEFAULT_PORTS:
        raise InvalidArticleURL("must be an http or https URL")
    if not parts.hostname:
        raise InvalidArticleURL("must include a host name")
    if parts.username is not None or parts.password is not None:
        raise InvalidArticleURL("must not include a user name or password")
    if port == 0:
        raise InvalidArticleURL("has an invalid port")
    try:
        _host_key(parts.hostname)
    except UnicodeError:
        raise InvalidArticleURL("has an invalid host name") from None
    return text


def _host_key(hostname: str) -> str:
    host = hostname.lower().rstrip(".")
    if ":" in host:  # IPv6 literal: urlsplit gives it without brackets
        return f"[{host}]"
    try:
        host.encode("ascii")
    except UnicodeEncodeError:
        host = host.encode("idna").decode("ascii")
    return host


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACKING_PARAMS or lowered.startswith(_TRACKING_PREFIXES)


def _normalise_path(path: str) -> str:
    # Re-quote so that "%7e", "~" and "%7E" compare equal, keeping reserved characters as sent.
    path = quote(unquote(path), safe="/:@!$&'()*+,;=-._~%")
    path = re.sub(r"/{2,}", "/", path)
    if path.endswith("/"):
        path = path.rstrip("/")
    return path or ""


def normalise_url(url: str) -> str:
    """The duplicate-detection key of a URL.

    Lower-cases scheme and host (IDNA-encoded), drops default ports, user info, the fragment,
    tracking parameters (`utm_*`, `fbclid`, ...) and a trailing slash, collapses repeated
    slashes and sorts the remaining query parameters. Raises InvalidArticleURL when `url` is not
    an http(s) URL.
    """
    text = validate_url(url)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    host = _host_key(parts.hostname or "")
    port = parts.port
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    query_items = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not _is_tracking(name)
    ]
    query = urlencode(sorted(query_items), doseq=True)
    return urlunsplit((scheme, netloc, _normalise_path(parts.path), query, ""))


def host_of(url: str) -> str:
    """The lower-cased host of a URL without a leading `www.` ("" when there is none)."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return host.removeprefix("www.")


def same_site(url: str, other: str) -> bool:
    """Whether two URLs are on one site: the same host, ignoring scheme, port and a leading
    `www.`. Deliberately strict (no registrable-domain matching, which needs the public
    suffix list): `blog.example.com` and `example.com` are different sites here, so a page
    can only vouch for addresses of its very own host."""
    host = host_of(url)
    return bool(host) and host == host_of(other)


def is_short_link(url: str, extra_hosts: frozenset[str] = frozenset()) -> bool:
    """True when the URL's host is a known link shortener (or one of `extra_hosts`)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    bare = host.removeprefix("www.")
    hosts = SHORT_LINK_HOSTS | extra_hosts
    if host in hosts or bare in hosts:
        return True
    first_segment = parts.path.strip("/").split("/", 1)[0]
    return bool(first_segment) and f"{bare}/{first_segment}" in hosts


def is_pdf_url(url: str) -> bool:
    """True when the URL's path names a PDF file (`.pdf`, any case)."""
    return urlsplit(url).path.lower().endswith(".pdf")


SocialPlatform = Literal["x", "bluesky", "mastodon"]


@dataclass(frozen=True, slots=True)
class SocialPostRef:
    """A link to a single post on a social network."""

    platform: SocialPlatform
    url: str  # the link as given (validated)
    host: str  # lower-cased host of the link
    author: str  # the handle in the link: `jack`, `alice.bsky.social`, a DID, `alice`
    post_id: str  # status id or record key


_X_HOSTS = frozenset(
    {
        "x.com",
        "twitter.com",
        "mobile.twitter.com",
        "mobile.x.com",
        "www.twitter.com",
        "www.x.com",
        "fxtwitter.com",
        "vxtwitter.com",
        "fixupx.com",
    }
)
_X_STATUS = re.compile(r"^/(?P<user>[A-Za-z0-9_]{1,30})/status(?:es)?/(?P<id>\d{1,25})(?:/.*)?$")
_X_WEB_STATUS = re.compile(r"^/i/(?:web/)?status/(?P<id>\d{1,25})(?:/.*)?$")
_BSKY_HOSTS = frozenset({"bsky.app", "www.bsky.app", "staging.bsky.app"})
_BSKY_POST = re.compile(
    r"^/profile/(?P<actor>[A-Za-z0-9._:%-]{1,300})/post/(?P<rkey>[A-Za-z0-9._~:-]{1,64})/?$"
)
# Mastodon (and most ActivityPub servers speaking its API) link statuses as /@user/ID, or
# /users/user/statuses/ID. Any host may run Mastodon, so this is a guess the fetch confirms.
_MASTODON_POST = re.compile(
    r"^/(?:@(?P<user>[A-Za-z0-9_.-]{1,64}(?:@[A-Za-z0-9.-]{1,253})?)|users/(?P<user2>[A-Za-z0-9_.-]{1,64})/statuses)/(?P<id>\d{1,25})/?$"
)


def parse_social_post(url: str) -> SocialPostRef | None:
    """The post a URL points at, when it is a link to one social post; else None."""
    try:
        text = validate_url(url)
    except InvalidArticleURL:
        return None
    parts = urlsplit(text)
    host = (parts.hostname or "").lower().rstrip(".")
    path = parts.path
    if host in _X_HOSTS:
        match = _X_STATUS.match(path)
        if match:
            return SocialPostRef("x", text, host, match["user"], match["id"])
        match = _X_WEB_STATUS.match(path)
        if match:
            return SocialPostRef("x", text, host, "", match["id"])
        return None
    if host in _BSKY_HOSTS:
        match = _BSKY_POST.match(path)
        if match:
            return SocialPostRef("bluesky", text, host, unquote(match["actor"]), match["rkey"])
        return None
    match = _MASTODON_POST.match(path)
    if match:
        user = match["user"] or match["user2"] or ""
        return SocialPostRef("mastodon", text, host, user, match["id"])
    return None
