"""A local web server for the fetching tests, bound to loopback only.

Every page the tests fetch is served from here; nothing leaves this machine. Tests that need
the fetcher to reach this server run with private networks allowed; the refusal tests run
with the guard on and only ever aim it at loopback addresses.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from screvi_mcp.local.fetching.netguard import IPAddress

FIXTURES = Path(__file__).parent / "fixtures"

ARTICLE_HTML = (FIXTURES / "article.html").read_bytes()
# The same article with twenty more paragraphs (some emoji among them): several chunks long.
LONG_ARTICLE_HTML = ARTICLE_HTML.replace(
    b"</article>",
    "".join(
        f"<p>Paragraph {n} 📚 goes on about margins, memory and the patience that slow reading "
        f"asks of anyone who tries it for a week or two, and what it gives back.</p>\n"
        for n in range(20)
    ).encode()
    + b"</article>",
)


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]], *, title: str, author: str) -> bytes:
    """A small valid PDF with one text line per entry, written by hand (Helvetica, xref)."""
    objects: dict[int, str] = {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        3: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    kids: list[str] = []
    number = 4
    for lines in pages:
        content = (
            "BT /F1 11 Tf 56 740 Td 15 TL "
            + " ".join(f"({_pdf_escape(line)}) Tj T*" for line in lines)
            + " ET"
        )
        objects[number] = (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {number + 1} 0 R >>"
        )
        objects[number + 1] = f"<< /Length {len(content)} >>\nstream\n{content}\nendstream"
        kids.append(f"{number} 0 R")
        number += 2
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    info = number
    objects[info] = (
        f"<< /Title ({_pdf_escape(title)}) /Author ({_pdf_escape(author)}) "
        "/CreationDate (D:20240305100000Z) >>"
    )
    out = b"%PDF-1.4\n"
    offsets: dict[int, int] = {}
    for index in sorted(objects):
        offsets[index] = len(out)
        out += f"{index} 0 obj\n{objects[index]}\nendobj\n".encode("latin-1")
    xref = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offsets[i]:010d} 00000 n \n" for i in range(1, size)).encode()
    out += (
        f"trailer\n<< /Size {size} /Root 1 0 R /Info {info} 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return out


PDF_BODY = make_pdf(
    [
        [
            "Field Notes",
            "Reading slowly is an old practice that rewards the patient reader with",
            "ideas that stay. Monks copied manuscripts by hand and remembered what",
            "they copied, because every word passed through their atten-",
            "tion twice.",
            "Modern readers skim headlines, jump between tabs and rarely return to a",
            "paragraph once they have left it behind them for something newer.",
        ],
        ["The second page closes the argument with a short practical exercise today."],
    ],
    title="Field Notes on Slow Reading",
    author="Grace Hopper",
)

# PNG signature and a few bytes of an IHDR chunk: binary, neither HTML nor PDF.
BINARY_BODY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4

OEMBED_JSON = {
    "url": "https://twitter.com/adalovelace/status/1234567890123456789",
    "author_name": "Ada Lovelace",
    "author_url": "https://twitter.com/adalovelace",
    "html": (
        '<blockquote class="twitter-tweet"><p lang="en" dir="ltr">The engine weaves algebraic '
        "patterns<br>just as the Jacquard loom weaves flowers and leaves. "
        '<a href="https://t.co/abc">https://t.co/abc</a></p>&mdash; Ada Lovelace '
        '(@adalovelace) <a href="https://twitter.com/adalovelace/status/1234567890123456789'
        '?ref_src=twsrc%5Etfw">March 5, 2024</a></blockquote>\n'
    ),
    "provider_name": "Twitter",
    "type": "rich",
}

BSKY_DID = "did:plc:abcdefghijklmnopqrstuvwx"
BSKY_POSTS_JSON = {
    "posts": [
        {
            "uri": f"at://{BSKY_DID}/app.bsky.feed.post/3kabc2xyz",
            "author": {
                "did": BSKY_DID,
                "handle": "grace.bsky.social",
                "displayName": "Grace Hopper",
                "avatar": "https://cdn.example/avatar.jpg",
            },
            "record": {
                "text": "It is easier to ask forgiveness than it is to get permission.",
                "createdAt": "2024-05-01T12:30:00.000Z",
            },
        }
    ]
}

MASTODON_JSON = {
    "id": "111222333444555666",
    "created_at": "2024-06-10T08:15:00.000Z",
    "url": "https://mastodon.example/@alan/111222333444555666",
    "content": "<p>Machines take me by surprise<br>with great frequency.</p><p>Second para.</p>",
    "spoiler_text": "",
    "reblog": None,
    "account": {
        "username": "alan",
        "acct": "alan",
        "display_name": "Alan Turing",
        "url": "https://mastodon.example/@alan",
        "avatar": "https://mastodon.example/avatars/alan.png",
    },
}


@dataclass
class Seen:
    path: str
    host: str | None


@dataclass
class LocalSite:
    """The running server: its base URL and what it was asked for."""

    host: str
    port: int
    requests: list[Seen] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def hits(self, path: str) -> int:
        return sum(1 for seen in self.requests if urlsplit(seen.path).path == path)


Handler = Callable[["_Handler", LocalSite], None]


class _Handler(BaseHTTPRequestHandler):
    site: LocalSite
    server_version = "TestSite/1.0"

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def send(
        self,
        status: int,
        body: bytes = b"",
        content_type: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
        *,
        length: bool = True,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length:
            self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        site = self.site
        site.requests.append(Seen(self.path, self.headers.get("Host")))
        parts = urlsplit(self.path)
        path = parts.path
        query = parse_qs(parts.query)
        site.counters[path] = site.counters.get(path, 0) + 1
        if path in ("/article", "/essays/reading-slowly", "/article/"):
            self.send(200, ARTICLE_HTML)
        elif path == "/long":
            self.send(200, LONG_ARTICLE_HTML)
        elif path == "/article-no-type":
            self.send(200, ARTICLE_HTML, content_type="")
        elif path.startswith("/redirect/"):
            hops = int(path.rsplit("/", 1)[1])
            target = "/article" if hops == 0 else f"/redirect/{hops - 1}"
            self.send(302, b"", headers={"Location": target})
        elif path == "/loop":
            self.send(302, b"", headers={"Location": "/loop"})
        elif path == "/to-loopback":
            # An absolute redirect into 127.0.0.1 (this very server) from a host the test let in.
            self.send(302, b"", headers={"Location": f"http://127.0.0.1:{site.port}/article"})
        elif path == "/redirect-to":
            self.send(302, b"", headers={"Location": query["url"][0]})
        elif path == "/to-localhost":
            self.send(302, b"", headers={"Location": f"http://localhost:{site.port}/article"})
        elif path == "/to-file":
            self.send(302, b"", headers={"Location": "file:///etc/passwd"})
        elif path == "/missing":
            self.send(404, b"<html><body><h1>Not found</h1></body></html>")
        elif path == "/broken":
            self.send(503, b"<html><body>busy</body></html>")
        elif path == "/flaky":
            if site.counters[path] == 1:
                self.send(503, b"<html><body>try again</body></html>")
            else:
                self.send(200, ARTICLE_HTML)
        elif path == "/big":
            self.send(200, b"<html><body><p>" + b"x" * 300_000 + b"</p></body></html>")
        elif path == "/big-chunked":
            # No Content-Length: the limit must be enforced while reading.
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            try:
                for _ in range(40):
                    self.wfile.write(b"<p>" + b"y" * 10_000 + b"</p>")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif path == "/pause":
            # A page held until the test releases it (or 15 s pass, inside the fetcher's 20 s
            # read timeout): other processes start and claim while it is being fetched.
            site.release.wait(15)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send(200, ARTICLE_HTML)
        elif path == "/trickle":
            # Headers at once, then a byte every 0.2 s: alive, but far too slow to finish.
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            try:
                for _ in range(300):
                    if site.release.wait(0.2):
                        break
                    self.wfile.write(b"x")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif path == "/slow":
            site.release.wait(10)  # released at teardown; the client gives up long before
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send(200, ARTICLE_HTML)
        elif path in ("/doc.pdf", "/download"):
            self.send(200, PDF_BODY, content_type="application/pdf")
        elif path == "/fake.pdf":
            self.send(200, b"%PDF-1.4\nthis is not really a pdf", content_type="application/pdf")
        elif path == "/image.png":
            self.send(200, BINARY_BODY, content_type="image/png")
        elif path == "/blob":
            self.send(200, BINARY_BODY, content_type="application/octet-stream")
        elif path == "/notes.txt":
            self.send(200, b"First paragraph of notes.\n\nSecond paragraph.", "text/plain")
        elif path == "/empty-page":
            self.send(200, b"<html><head><title>x</title></head><body></body></html>")
        elif path == "/variant":
            body = ARTICLE_HTML.replace(
                b"https://example.org/essays/reading-slowly",
                f"http://{site.host}:{site.port}/essays/reading-slowly".encode(),
            )
            self.send(200, body)
        elif path == "/declares-canonical":
            # A page naming any URL it likes as its canonical link (a hijack attempt).
            body = ARTICLE_HTML.replace(
                b"https://example.org/essays/reading-slowly", query["url"][0].encode()
            )
            self.send(200, body)
        elif path == "/oembed":
            self.send(200, json.dumps(OEMBED_JSON).encode(), "application/json")
        elif path == "/xrpc/com.atproto.identity.resolveHandle":
            if query.get("handle") == ["grace.bsky.social"]:
                self.send(200, json.dumps({"did": BSKY_DID}).encode(), "application/json")
            else:
                self.send(400, b'{"error":"InvalidRequest"}', "application/json")
        elif path == "/xrpc/app.bsky.feed.getPosts":
            self.send(200, json.dumps(BSKY_POSTS_JSON).encode(), "application/json")
        elif path == "/api/v1/statuses/111222333444555666":
            self.send(200, json.dumps(MASTODON_JSON).encode(), "application/json")
        elif path.startswith("/api/v1/statuses/"):
            self.send(404, b'{"error":"Record not found"}', "application/json")
        else:
            self.send(404, b"<html><body>no such page</body></html>")


def serve(host: str) -> Iterator[LocalSite]:
    site = LocalSite(host=host, port=0)
    handler = type("Handler", (_Handler,), {"site": site})
    server = ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    site.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, args=(0.05,), name=f"site-{host}", daemon=True
    )
    thread.start()
    try:
        yield site
    finally:
        site.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


class LoopbackRouter(httpx.AsyncBaseTransport):
    """Sends every request to the local site over plain HTTP, whatever host it names.

    Stands in for the internet in the social-post tests: `publish.twitter.com` and friends
    are answered by the local server, and nothing can leave the machine.
    """

    def __init__(self, site: LocalSite) -> None:
        self.site = site
        self.inner = httpx.AsyncHTTPTransport()
        self.seen: list[str] = []  # Host header + path of each request

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request.headers.get("Host", "") + request.url.raw_path.decode())
        url = request.url.copy_with(scheme="http", host=self.site.host, port=self.site.port)
        forwarded = httpx.Request(
            request.method, url, headers=request.headers, stream=request.stream
        )
        return await self.inner.handle_async_request(forwarded)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def loopback_resolver(host: str, port: int) -> list[IPAddress]:
    """DNS for the social tests: every name is this machine."""
    return [ipaddress.ip_address("127.0.0.1")]
