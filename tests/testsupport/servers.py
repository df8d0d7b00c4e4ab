"""Real servers on the loopback interface, for tests that need a socket."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from testsupport.polling import wait_until

START_TIMEOUT_SECONDS = 15.0


def loopback_socket() -> socket.socket:
    """A listening-ready TCP socket on 127.0.0.1 and a free port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it; without it each response waits out delayed ACKs
    # (about 40 ms a request).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def free_port() -> int:
    """A port free on 127.0.0.1 right now, for a server started in another process."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def asgi_server(app: Any) -> Iterator[str]:
    """Run an ASGI app (lifespan included) with uvicorn in a thread; yield its base URL."""
    import uvicorn

    sock = loopback_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="test-uvicorn", daemon=True
    )
    thread.start()

    def started() -> bool:
        if not thread.is_alive():
            raise RuntimeError("uvicorn stopped before it started")
        return bool(server.started)

    try:
        wait_until(started, timeout=START_TIMEOUT_SECONDS, what="uvicorn did not start", every=0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT_SECONDS)
        sock.close()


class ConnectionCounter:
    """A TCP relay on 127.0.0.1 in front of a real server that counts the connections it
    accepts: the way to see, from outside the client, whether connections are reused."""

    def __init__(self, target_port: int) -> None:
        self._target_port = target_port
        self._listener = loopback_socket()
        self._listener.listen()
        self._listener.settimeout(0.1)
        self._stopped = threading.Event()
        self._open: list[socket.socket] = []
        self.accepted = 0
        self.port = int(self._listener.getsockname()[1])
        self._thread = threading.Thread(target=self._accept, name="test-relay", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                near, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:  # the listener was closed
                return
            self.accepted += 1
            far = socket.create_connection(("127.0.0.1", self._target_port))
            self._open += [near, far]
            for source, sink in ((near, far), (far, near)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()

    def close(self) -> None:
        self._stopped.set()
        self._thread.join(START_TIMEOUT_SECONDS)
        self._listener.close()
        for sock in self._open:
            sock.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with suppress(OSError):  # either side closed
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@contextmanager
def connection_counter(base_url: str) -> Iterator[tuple[str, ConnectionCounter]]:
    """A relay in front of `base_url` (http://127.0.0.1:PORT): yields its URL and counter."""
    port = int(base_url.rsplit(":", 1)[1].split("/", 1)[0])
    counter = ConnectionCounter(port)
    try:
        yield f"http://127.0.0.1:{counter.port}", counter
    finally:
        counter.close()
