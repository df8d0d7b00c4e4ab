"""The background worker: queued → fetching → parsed or failed.

One dispatcher task claims due rows from the database (so the queue survives restarts and is
shared with any other process writing the same file) and runs at most `concurrency` of them
at once. Transient failures (timeouts, connection errors, 5xx, 429) go back to `queued` with an
exponential backoff until `max_attempts`; everything else fails at once with a stored reason.
Each claim carries its worker's token and a lease the worker keeps renewing: rows a crash left
in `fetching` are put back in the queue once their lease has run out, and never while another
process (or this one) is still at work on them, so no page is fetched twice at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.fetching.extract import (
    ExtractedArticle,
    ExtractionError,
    clean_text,
    count_words,
    extract_html,
    extract_pdf,
    looks_like_html,
    looks_like_pdf,
    make_excerpt,
    reading_minutes,
)
from screvi_mcp.local.fetching.fetcher import Fetcher, FetchError, FetchResult
from screvi_mcp.local.fetching.urls import host_of
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.clock import SYSTEM_CLOCK, Clock
from screvi_mcp.local.storage.library import Library

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf", "application/acrobat"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
# Types that say nothing about the body: sniff it.
VAGUE_TYPES = frozenset(
    {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}
)


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    concurrency: int = 3
    max_attempts: int = 3
    retry_base_delay: float = 30.0  # seconds before the 2nd attempt; doubles each time
    retry_max_delay: float = 900.0
    poll_interval: float = 30.0  # look for work saved by other processes this often
    # A claim on an article lasts this long unless renewed; the worker renews it every third
    # of it while it works, so only a dead or stuck worker's claim runs out and is taken over.
    claim_lease: float = 90.0
    # What leases, retries and the lease's renewals are timed by (tests pass a manual clock).
    clock: Clock = SYSTEM_CLOCK


def _failure(
    reason: str,
    message: str,
    *,
    url: str,
    attempts: int,
    http_status: int | None = None,
    content_type: str | None = None,
    will_retry: bool = False,
) -> dict[str, Any]:
    failure: dict[str, Any] = {
        "reason": reason,
        "message": message,
        "http_status": http_status,
        "content_type": content_type,
        "url": url,
        "attempts": attempts,
    }
    if will_retry:
        failure["will_retry"] = True
    return failure


def _plain_text_article(body: bytes, *, url: str, charset: str | None) -> ExtractedArticle:
    import html

    text = body.decode(charset or "utf-8", errors="replace")
    paragraphs = [" ".join(block.split()) for block in text.replace("\r\n", "\n").split("\n\n")]
    paragraphs = [clean_text(p) for p in paragraphs if p]
    content = "\n\n".join(paragraphs)
    if not content:
        raise ExtractionError("no_content", "the document is empty")
    words = count_words(content)
    return ExtractedArticle(
        content_html="\n".join(f"<p>{html.escape(p, quote=False)}</p>" for p in paragraphs),
        content_text=content,
        excerpt=make_excerpt(content),
        source_domain=host_of(url) or None,
        word_count=words,
        reading_time_minutes=reading_minutes(words),
    )


def extract_fetched(result: FetchResult) -> ExtractedArticle:
    """The article in a fetched body, chosen by content type and, when that is vague, by sniffing.

    Raises ExtractionError (`unsupported_content_type` for anything not HTML, PDF or text).
    """
    kind = result.content_type
    body = result.body
    if kind in PDF_TYPES or (kind not in HTML_TYPES and looks_like_pdf(body)):
        return extract_pdf(body, url=result.url)
    if kind in HTML_TYPES or (kind in VAGUE_TYPES and looks_like_html(body)):
        return extract_html(body, url=result.url, charset=result.charset)
    if kind in TEXT_TYPES:
        return _plain_text_article(body, url=result.url, charset=result.charset)
    described = kind or "content of an unknown type"
    raise ExtractionError(
        "unsupported_content_type",
        f"the link leads to {described}, not a web page or a PDF",
    )


class ArticleWorker:
    """Fetches and extracts queued articles in the background of the running event loop.

    `await start()` in the app's lifespan start-up and `await stop()` at shutdown. `wake()`
    after queueing an article makes it start without waiting for the next poll.
    """

    def __init__(
        self, library: Library, fetcher: Fetcher, settings: WorkerSettings | None = None
    ) -> None:
        self.library = library
        self.fetcher = fetcher
        self.settings = settings if settings is not None else WorkerSettings()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._dispatcher: asyncio.Task[None] | None = None
        self._running: dict[asyncio.Task[None], str] = {}
        self._db_calls: set[asyncio.Future[Any]] = set()
        self._claimed: set[str] = set()  # rows this worker moved to `fetching` and still owns
        # This worker's claims carry this token (the pid helps whoever reads the database).
        self.owner = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._stopping = False

    @property
    def started(self) -> bool:
        return self._dispatcher is not None

    async def start(self) -> None:
        if self._dispatcher is not None:
            return
        requeued, failed = await self._db(self._reset_interrupted)
        if requeued or failed:
            logger.info(
                "resuming %d article(s) interrupted by a previous shutdown (%d given up)",
                requeued,
                failed,
            )
        self._idle.clear()
        self._stopping = False
        self._dispatcher = asyncio.create_task(self._dispatch(), name="article-worker")

    async def stop(self) -> None:
        """Cancel in-flight work; those rows go back to `queued` for the next start."""
        dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is None:
            return
        self._stopping = True  # before any release below: no claim may follow a release
        dispatcher.cancel()
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(dispatcher, *running, return_exceptions=True)
        # Cancelling an await does not stop its thread: wait until no thread still uses the
        # library, which the caller is about to close (a closed connection in use crashes).
        while self._db_calls:
            await asyncio.gather(*list(self._db_calls), return_exceptions=True)
        # A claim that landed after its dispatcher was cancelled has no task: hand it back.
        for article_id in list(self._claimed):
            await self._db(self._release, article_id)

    async def _db(self, function: Callable[..., _T], *args: Any) -> _T:
        """Run a database step in a worker thread; it finishes even if the caller is cancelled."""
        call = asyncio.ensure_future(asyncio.to_thread(function, *args))
        self._db_calls.add(call)
        call.add_done_callback(self._db_calls.discard)
        return await asyncio.shield(call)

    def wake(self) -> None:
        """New work may be due: look now rather than at the next poll."""
        self._idle.clear()
        self._wake.set()

    async def wait_idle(self) -> None:
        """Until nothing runs and nothing queued is due (for tests and orderly shutdowns)."""
        await self._idle.wait()

    def _reset_interrupted(self) -> tuple[int, int]:
        with self.library.write() as conn:
            return article_rows.reset_interrupted(
                conn, self.settings.max_attempts, self.settings.clock.now()
            )

    def _claim(self) -> article_rows.Claim | None:
        with self.library.write() as conn:
            # Checked under the write lock: a claim cannot slip in after stop() released rows.
            if self._stopping:
                return None
            # Claims of workers that died meanwhile (in any process) become work again.
            now = self.settings.clock.now()
            article_rows.reset_interrupted(conn, self.settings.max_attempts, now)
            claim = article_rows.claim_next(conn, self.owner, self.settings.claim_lease, now)
        if claim is not None:
            self._claimed.add(claim.article_id)
        return claim

    def _seconds_until_due(self) -> float:
        due = article_rows.next_due_at(self.library.connection())
        if due is None:
            return self.settings.poll_interval
        wait = (clock.parse_timestamp(due) - self.settings.clock.now()).total_seconds()
        return min(max(wait, 0.0), self.settings.poll_interval)

    async def _dispatch(self) -> None:
        while True:
            self._wake.clear()
            try:
                while len(self._running) < self.settings.concurrency:
                    claim = await self._db(self._claim)
                    if claim is None:
                        break
                    task = asyncio.create_task(
                        self._process(claim), name=f"article-{claim.article_id}"
                    )
                    self._running[task] = claim.article_id
                    task.add_done_callback(self._finished)
                wait = await self._db(self._seconds_until_due)
            except asyncio.CancelledError:
                raise
            except Exception:
                # A locked or broken database must not kill background work for good.
                logger.exception("article worker: could not read the queue")
                wait = self.settings.poll_interval
            timeout: float | None
            if len(self._running) >= self.settings.concurrency:
                timeout = None  # full: a finishing task wakes us
            elif wait <= 0:
                continue  # a retry fell due meanwhile
            else:
                timeout = wait
                # Idle only if nothing woke us during this round: a wake means news (a save,
                # a finished task) that the claim above may not have seen.
                if not self._running and not self._wake.is_set():
                    self._idle.set()
            try:
                async with asyncio.timeout(timeout):
                    await self._wake.wait()
            except TimeoutError:
                pass

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            logger.error("article task failed: %r", task.exception())
        if self._dispatcher is not None:
            self.wake()

    async def _process(self, claim: article_rows.Claim) -> None:
        renewing = asyncio.create_task(self._keep_claim(claim), name=f"lease-{claim.article_id}")
        try:
            await self._fetch_and_store(claim)
        except asyncio.CancelledError:
            await self._db(self._release, claim.article_id)
            raise
        finally:
            renewing.cancel()
            self._claimed.discard(claim.article_id)

    async def _keep_claim(self, claim: article_rows.Claim) -> None:
        """Renew the claim's lease while its fetch runs, so no other worker takes it over."""
        lease = self.settings.claim_lease
        while True:
            await self.settings.clock.sleep(lease / 3)
            try:
                await self._db(self._renew, claim)
            except asyncio.CancelledError:
                raise
            except Exception:  # a busy database: the next renewal is still within the lease
                logger.warning("could not renew the claim on article %s", claim.article_id)

    def _renew(self, claim: article_rows.Claim) -> bool:
        with self.library.write() as conn:
            return article_rows.renew(
                conn, claim, self.settings.claim_lease, self.settings.clock.now()
            )

    def _release(self, article_id: str) -> None:
        try:
            with self.library.write() as conn:
                article_rows.release(conn, article_id, self.owner)
        except Exception:  # shutting down: the next start resumes it anyway
            logger.warning("could not hand article %s back to the queue", article_id)
        self._claimed.discard(article_id)

    async def _fetch_and_store(self, claim: article_rows.Claim) -> None:
        url = claim.url
        logger.info("fetching article %s (attempt %d): %s", claim.article_id, claim.attempt, url)
        try:
            result = await self.fetcher.fetch(url)
        except FetchError as exc:
            await self._fetch_failed(claim, exc)
            return
        except Exception:
            logger.exception("unexpected error fetching article %s", claim.article_id)
            await self._db(
                self._store_failed,
                claim,
                "An unexpected error occurred while fetching the page",
                _failure(
                    "internal_error",
                    "an unexpected error occurred while fetching the page",
                    url=url,
                    attempts=claim.attempt,
                ),
            )
            return
        try:
            article = await asyncio.to_thread(extract_fetched, result)
        except ExtractionError as exc:
            await self._db(
                self._store_failed,
                claim,
                f"Could not extract the article: {exc.message}",
                _failure(
                    exc.reason,
                    exc.message,
                    url=result.url,
                    attempts=claim.attempt,
                    http_status=result.status,
                    content_type=result.content_type or None,
                ),
            )
            return
        except Exception:
            logger.exception("unexpected error extracting article %s", claim.article_id)
            await self._db(
                self._store_failed,
                claim,
                "An unexpected error occurred while extracting the article",
                _failure(
                    "internal_error",
                    "an unexpected error occurred while extracting the article",
                    url=result.url,
                    attempts=claim.attempt,
                ),
            )
            return
        await self._db(self._store_parsed, claim, article, result.url)
        logger.info("article %s parsed (%d words)", claim.article_id, article.word_count)

    async def _fetch_failed(self, claim: article_rows.Claim, exc: FetchError) -> None:
        retry = exc.transient and claim.attempt < self.settings.max_attempts
        message = f"Could not fetch the page: {exc.message}"
        failure = _failure(
            exc.reason,
            exc.message,
            url=exc.url,
            attempts=claim.attempt,
            http_status=exc.http_status,
            content_type=exc.content_type,
            will_retry=retry,
        )
        if not retry:
            logger.info("article %s failed: %s", claim.article_id, exc.message)
            await self._db(self._store_failed, claim, message, failure)
            return
        delay = min(
            self.settings.retry_max_delay,
            self.settings.retry_base_delay * 2 ** (claim.attempt - 1),
        )
        delay *= random.uniform(0.8, 1.2)  # jitter: retries of one site do not march in step
        due = self.settings.clock.now() + timedelta(seconds=delay)
        logger.info("article %s: %s; retrying in %.0f s", claim.article_id, exc.message, delay)
        await self._db(
            self._requeue,
            claim,
            clock.format_timestamp(due),
            f"{message} (attempt {claim.attempt} of {self.settings.max_attempts}; will retry)",
            failure,
        )

    def _store_failed(
        self, claim: article_rows.Claim, message: str, failure: dict[str, Any]
    ) -> None:
        with self.library.write() as conn:
            article_rows.store_failed(conn, claim, message, failure)

    def _requeue(
        self, claim: article_rows.Claim, due_at: str, message: str, failure: dict[str, Any]
    ) -> None:
        with self.library.write() as conn:
            article_rows.requeue(conn, claim, due_at, message, failure)

    def _store_parsed(
        self, claim: article_rows.Claim, article: ExtractedArticle, final_url: str
    ) -> None:
        with self.library.write() as conn:
            seqs = article_rows.store_parsed(conn, claim, article, final_url=final_url)
        self.library.notify_changed(seqs)
