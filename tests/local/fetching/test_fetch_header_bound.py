"""A page that delays its headers is dropped at the header bound, not the whole-fetch one
(issue 31, item 12): one header byte every second kept each read under the read timeout and
held a fetch worker about 155 s over its attempts."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from screvi_mcp.local.fetching.fetcher import Fetcher, FetchError, FetchSettings
from screvi_mcp.local.fetching.netguard import AddressPolicy
from testsupport.servers import loopback_socket


@contextmanager
def trickling_headers() -> Iterator[str]:
    """A server that answers every request with its status line one byte a second."""
    listener = loopback_socket()
    listener.listen()
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n":
                if stop.wait(1.0):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/slow"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


async def test_headers_that_never_finish_arriving_end_the_fetch_early() -> None:
    settings = FetchSettings(read_timeout=5.0, total_timeout=30.0, header_timeout=2.0)
    with trickling_headers() as url:
        async with Fetcher(AddressPolicy(allow_private=True), settings) as fetcher:
            began = time.monotonic()
            with pytest.raises(FetchError) as failed:
                await fetcher.fetch(url)
            took = time.monotonic() - began
    assert took < 6.0  # the header bound (2 s), far below the whole fetch's 30 s
    assert failed.value.reason == "too_slow" and not failed.value.transient
    assert "headers" in str(failed.value)
