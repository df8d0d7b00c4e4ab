"""A tiny web site on 127.0.0.1 serving fixed pages: articles for save → fetch → search tests.

Nothing leaves the machine; the fetcher reaches it only with private networks allowed
(`allow_private_networks=True`, or SCREVI_ALLOW_PRIVATE_NETWORKS=1 for a subprocess).
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def article_html(title: str, author: str, paragraphs: list[str]) -> bytes:
    body = "\n".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (
        f"<!doctype html><html lang='en'><head><title>{html.escape(title)}</title>"
        f"<meta name='author' content='{html.escape(author)}'></head><body><article>"
        f"<h1>{html.escape(title)}</h1>{body}</article></body></html>"
    ).encode()


@contextmanager
def serve_pages(pages: Mapping[str, bytes]) -> Iterator[str]:
    """Serve `pages` (path -> HTML, or a PDF for a path ending in .pdf) until the block
    ends; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = pages.get(self.path)
            self.send_response(200 if body is not None else 404)
            pdf = self.path.endswith(".pdf")
            self.send_header(
                "Content-Type", "application/pdf" if pdf else "text/html; charset=utf-8"
            )
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="test-pages", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
