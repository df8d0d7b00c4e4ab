"""The background thread that turns the embedding queue into vectors.

One per attached index (so one per process and library). It sleeps until a write wakes it,
or at most `POLL_SECONDS`, which is how it notices rows another process queued or abandoned.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from screvi_mcp.local.search.embedding_queue import new_claim_token
from screvi_mcp.local.storage.db import is_busy

if TYPE_CHECKING:
    from screvi_mcp.local.search.index import SemanticIndex

log = logging.getLogger("screvi_mcp.local.search")

# Idle wait between looks at the queue when no write of ours woke the worker.
POLL_SECONDS = 2.0
# How long closing waits for the round in progress: it stops between model batches, so a
# fraction of a second idle, a few seconds on a loaded machine.
STOP_SECONDS = 30.0
# After an unexpected failure, wait this long before trying again (not a hot loop).
RETRY_SECONDS = 5.0
# `wait_until_empty`: the longest wait for a pass of this worker before the queue is looked
# at again (rows another process or thread embeds end no pass of ours), and the longest
# pause between looks while such rows stay queued.
PASS_WAIT_SECONDS = 0.25


class EmbeddingWorker:
    def __init__(self, index: SemanticIndex) -> None:
        self._index = index
        self._claim = new_claim_token()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        # Passes over the queue finished (`_run`), for whoever waits for it to empty.
        self._passes = threading.Condition()
        self._passes_done = 0
        # How fast this worker embeds: the search backlog's lag estimate (backlog.py).
        from screvi_mcp.local.search.throughput import Throughput

        self.throughput = Throughput()

    def start(self, first: Callable[[], None] | None = None) -> None:
        """Start the thread; it runs `first` (if given) before its first round."""
        with self._start_lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._run, args=(first,), name="screvi-embedding-queue", daemon=True
            )
            self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def drain(self, after_round: Callable[[], None] | None = None) -> int:
        """Embed everything claimable on the calling thread; returns rows handled.

        A thread other than the worker's (a one-shot command draining beside it) claims
        under a token of its own: each round ends by releasing whatever its token still
        holds, and a shared token let the worker hand back, and then embed again, the rows
        the other thread was embedding. `after_round` is called after each round (a
        one-shot command's progress line)."""
        token = self._claim if threading.current_thread() is self._thread else new_claim_token()
        handled = 0
        while not self._stop.is_set():
            began = time.monotonic()
            claimed = self._index.embed_queued(token)
            if not claimed:
                return handled
            self.throughput.note(claimed, time.monotonic() - began)
            handled += claimed
            if after_round is not None:
                after_round()
        return handled

    def _run(self, first: Callable[[], None] | None) -> None:
        library = self._index.library
        if first is not None:
            try:
                first()
            except Exception as exc:
                if is_busy(exc):  # the next round's sweep finds them as well
                    log.debug("library busy; highlights without vectors are looked for later")
                elif not (library.closed or self._stop.is_set()):
                    log.exception("finding highlights without vectors failed")
        while not self._stop.is_set() and not library.closed:
            self._wake.clear()
            try:
                self.drain()
                self._pass_done()
            except Exception as exc:
                if library.closed or self._stop.is_set():
                    return  # closing mid-round is a normal shutdown; the rows stay queued
                if is_busy(exc):  # another writer held the library: transient, no traceback
                    log.debug("library busy; embedding resumes in %gs", RETRY_SECONDS)
                else:
                    log.exception("embedding queued highlights failed; retrying")
                self._stop.wait(RETRY_SECONDS)
                continue
            self._wake.wait(POLL_SECONDS)

    def _pass_done(self) -> None:
        with self._passes:
            self._passes_done += 1
            self._passes.notify_all()

    def _wait_for_pass(self, timeout: float) -> bool:
        """Wake the worker and wait until a pass of it ends (True) or `timeout` passes."""
        with self._passes:
            target = self._passes_done + 1
            self.wake()
            return self._passes.wait_for(lambda: self._passes_done >= target, timeout)

    def wait_until_empty(self, pending: Callable[[], int], deadline: float) -> bool:
        """Until `pending()` is 0 (True) or `time.monotonic()` reaches `deadline` (False).

        The queue is looked at when a pass of this worker ends, not every few milliseconds:
        polling it every 10-20 ms cost a query and a wake-up each time, thousands during an
        evaluation library's build, and took the GIL from the thread embedding. Rows held
        by another process or thread end no pass here: they are looked at again within
        PASS_WAIT_SECONDS, backing off from 10 ms so a short wait stays short."""
        pause = 0.0
        while pending():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if pause:
                time.sleep(min(pause, remaining))
            ended = self._wait_for_pass(min(PASS_WAIT_SECONDS, remaining))
            # A pass ended and rows still wait: others hold them (their pace, not ours).
            pause = min(max(2 * pause, 0.01), PASS_WAIT_SECONDS) if ended else 0.0
        return True
