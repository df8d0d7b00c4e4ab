"""Serving a mirror: reads from the local copy, writes to Screvi first, freshness bounded.

`MirroredClient` is a `ScreviClient` of the mirror's embedded app (so the MCP tools use it
like any other backend) with two differences:

- Every write goes to Screvi through a hosted client; only if Screvi accepts it is the
  answer stored in the mirror (`write_through`), so the two never diverge and a refused
  write changes nothing locally. Without an API key there is no hosted client: the server
  is read-only and does not offer write tools.
- Before a read, if the mirror's last sync is older than `max_age`, an incremental sync is
  started in the background and the read waits for it at most `wait` seconds. If the sync
  is not done by then (or failed, e.g. offline), the read is answered from the mirror as it
  is, and a note says how old it is (`notes.call_notes`). The sync goes on under its own time
  limit and pauses resumably if it runs out.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from screvi_mcp import contract
from screvi_mcp.client.client import ScreviClient
from screvi_mcp.client.deadline import call_deadline
from screvi_mcp.client.errors import ScreviAPIError, ScreviConnectionError
from screvi_mcp.client.inputs import NewHighlight
from screvi_mcp.client.marks import endpoint_methods
from screvi_mcp.client.params import Unset
from screvi_mcp.client.retry import RetryPolicy
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import mirror_rows as store
from screvi_mcp.local.storage.store.mirror_rows.state import STATE_LAST_SYNC
from screvi_mcp.mirror.clock_transport import ClockTransport
from screvi_mcp.mirror.identity import MirrorMismatch, key_fingerprint, normalise_base_url
from screvi_mcp.mirror.notes import add_note
from screvi_mcp.mirror.sync import SyncSettings, build_client, run_sync
from screvi_mcp.mirror.write_through import WriteThrough
from screvi_mcp.models import Tag

log = logging.getLogger("screvi_mcp.mirror")


class MirrorRefusal(ScreviAPIError):
    """What a mirror cannot do (write without a key, take another caller's key)."""

    default_code = "mirror_read_only"

    def __init__(self, message: str) -> None:
        super().__init__(message, status=403, from_server=False)


LOCAL_READS_PER_MINUTE = 1_000_000
# A refresh's requests end at most this long after its time limit.
REFRESH_GRACE_SECONDS = 15.0


@dataclass(frozen=True)
class FreshnessPolicy:
    # A mirror older than this is refreshed before answering (seconds).
    max_age: float = 900.0
    # How long one tool call waits for that refresh before answering from the mirror as is.
    wait: float = 3.0
    # A refresh started by a tool call stops (resumably) after this long.
    sync_time_limit: float = 120.0


_note = add_note
_UNREACHABLE = "Screvi could not be reached to refresh it"


def _age_text(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} seconds"
    if seconds < 5400:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} hours"
    return f"{seconds / 86400:.0f} days"


def _metadata_given(value: Any) -> dict[str, Any] | None:
    """What a write said about metadata: a dict to store, {} to clear, None for "unchanged"."""
    if isinstance(value, Unset):
        return None
    if value is None:
        return {}
    return dict(value) if isinstance(value, Mapping) else None


class MirroredClient(ScreviClient):
    """Reads answered by the mirror's embedded app; writes sent to Screvi, then mirrored."""

    def __init__(
        self,
        *,
        library: Library,
        hosted_key: str | None,
        hosted_base_url: str,
        policy: FreshnessPolicy,
        sync_settings: SyncSettings,
        **local_options: Any,
    ) -> None:
        super().__init__(**local_options)
        self.mirror_library = library
        self.policy = policy
        # A refresh a tool call started must not sit out a long Retry-After: its waits are
        # bounded by its own time limit (it pauses and the next refresh resumes).
        self._sync_settings = dataclasses.replace(
            sync_settings,
            retry=RetryPolicy(
                max_retries=4,
                base_delay=0.5,
                max_delay=8.0,
                max_total_wait=min(policy.sync_time_limit, 60.0),
            ),
        )
        sync_settings = self._sync_settings
        self._hosted_key = hosted_key
        self._hosted: ScreviClient | None = None
        self._sync_client: ScreviClient | None = None
        self._clock: ClockTransport | None = None
        self._writes: WriteThrough | None = None
        if hosted_key:
            # Writes and syncs share one limiter (same key, base URL and rate).
            self._hosted = ScreviClient.hosted(
                hosted_key,
                base_url=hosted_base_url,
                rate_limit=sync_settings.requests_per_minute,
                rate_window=sync_settings.rate_window_seconds,
            )
            self._sync_client, self._clock = build_client(
                hosted_key, hosted_base_url, sync_settings
            )
            self._writes = WriteThrough(library, self._hosted)
        self._refresh: asyncio.Task[Any] | None = None

    @property
    def can_write(self) -> bool:
        return self._hosted is not None

    def with_api_key(self, api_key: str) -> ScreviClient:
        raise MirrorRefusal(
            "This server answers from a mirror of one Screvi account and does not take "
            "per-client keys (X-Screvi-Api-Key); drop the header, or use a hosted-mode server"
        )

    async def aclose(self) -> None:
        if self._refresh is not None and not self._refresh.done():
            self._refresh.cancel()
        for client in (self._hosted, self._sync_client):
            if client is not None:
                await client.aclose()
        await super().aclose()

    # Freshness ----------------------------------------------------------------------------

    def last_sync(self) -> datetime | None:
        text = store.read_state(self.mirror_library.connection()).get(STATE_LAST_SYNC)
        return clock.parse_timestamp(text) if text else None

    def _age_seconds(self) -> float | None:
        last = self.last_sync()
        return None if last is None else (datetime.now(UTC) - last).total_seconds()

    async def refresh(self) -> Any:
        """Run one incremental sync now (bounded by the policy's time limit)."""
        assert self._sync_client is not None and self._clock is not None
        assert self._hosted_key is not None
        settings = dataclasses.replace(
            self._sync_settings, time_limit=self.policy.sync_time_limit, wait_for_vectors=False
        )
        # The time limit pauses between pages; the deadline also ends a request or a wait
        # at the budget that would run past it (the run stays resumable either way).
        with call_deadline(self.policy.sync_time_limit + REFRESH_GRACE_SECONDS):
            return await run_sync(
                self.mirror_library,
                self._sync_client,
                self._clock,
                api_key=self._hosted_key,
                settings=settings,
            )

    async def freshen(self) -> None:
        """Refresh a stale mirror, waiting a bounded time; otherwise say how old the answer is."""
        age = self._age_seconds()
        if age is not None and age <= self.policy.max_age:
            return
        as_of = "never synced" if age is None else f"last synced {_age_text(age)} ago"
        if self._sync_client is None:
            _note(
                f"Answered from the local mirror ({as_of}); no API key is set, so it cannot "
                "refresh. Run `screvi-mcp sync` to update it."
            )
            return
        if self._refresh is None or self._refresh.done():
            # A context of its own: the refresh outlives this tool call, so it must not
            # inherit the call's deadline (client.deadline) or its notes.
            self._refresh = asyncio.create_task(self.refresh(), context=contextvars.Context())
            self._refresh.add_done_callback(_log_refresh_outcome)
        try:
            await asyncio.wait_for(asyncio.shield(self._refresh), self.policy.wait)
        except TimeoutError:
            unreachable = self._clock.unreachable if self._clock is not None else None
            _note(
                f"Answered from the local mirror ({as_of}); "
                + (
                    f"{_UNREACHABLE} ({unreachable}); a refresh keeps trying in the background."
                    if unreachable
                    else "a refresh from Screvi is running and later calls will see it."
                )
            )
        except ScreviConnectionError as error:  # offline, Screvi down: the mirror still answers
            _note(
                f"Answered from the local mirror ({as_of}); {_UNREACHABLE} ({error}), so "
                "changes made since are missing."
            )
        except Exception as error:  # key revoked, ...: the mirror still answers
            _note(
                f"Answered from the local mirror ({as_of}); refreshing from Screvi failed "
                f"({type(error).__name__}: {error})."
            )

    async def get_article(self, article_id: str, **options: Any) -> Any:
        """From the mirror, except while the mirror has it waiting to be parsed: Screvi
        parses saved pages, so an agent waiting for a body asks Screvi until it is there
        (the body itself reaches the mirror with the next sync)."""
        await self.freshen()
        local = await ScreviClient.get_article(self, article_id, **options)
        if self._hosted is None or local.parse_state.value not in ("queued", "fetching"):
            return local
        remote = await self._hosted.get_article(article_id, **options)
        if remote.parse_state != local.parse_state and self._writes is not None:
            await self._writes.article(remote)
        return remote

    # Writes -------------------------------------------------------------------------------

    async def _write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self._hosted is None or self._writes is None:
            raise MirrorRefusal(
                "This mirror is served read-only because no SCREVI_API_KEY is set: writes go "
                "to Screvi and need a key with write access. Tell the user"
            )
        result = await getattr(self._hosted, name)(*args, **kwargs)
        try:
            new_tags = name in ("create_tag", "update_tag") or self._brings_new_tags(result)
            await self._apply(name, result, args, kwargs)
            if new_tags:
                # Answers embed tags without their timestamps: take the tag list (one request).
                await self._writes.refresh_tags()
        except Exception:  # Screvi has the write; the next sync brings it into the mirror
            log.exception("a write reached Screvi but could not be stored in the mirror")
            _note("Saved in Screvi; the local mirror shows it after its next sync.")
        return result

    def _brings_new_tags(self, result: Any) -> bool:
        items = result if isinstance(result, list) else [result]
        ids = [
            tag.id
            for item in items
            for tag in ([item] if isinstance(item, Tag) else getattr(item, "tags", None) or [])
        ]
        return bool(ids) and bool(store.unknown_tag_ids(self.mirror_library.connection(), ids))

    async def _apply(
        self, name: str, result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        store_it = _STORE.get(name)
        if store_it is None:  # a write the mirror has no copy rule for: the sync brings it
            _note("Saved in Screvi; the local mirror shows it after its next sync.")
            return
        assert self._writes is not None
        # The call's arguments by name, however they were passed.
        given = inspect.signature(getattr(ScreviClient, name)).bind(self, *args, **kwargs)
        await store_it(self._writes, result, given.arguments)


# How the mirror stores what Screvi answered to a write, by the client method that made it.
Given = dict[str, Any]


def _metadata(given: Given) -> dict[str, Any] | None:
    return _metadata_given(given.get("metadata", Unset()))


async def _highlight(writes: WriteThrough, result: Any, given: Given) -> None:
    await writes.highlights([result], [_metadata(given)])


async def _highlights_bulk(writes: WriteThrough, result: Any, given: Given) -> None:
    items = given["highlights"]
    metadata = [(i.metadata if isinstance(i, NewHighlight) else i.get("metadata")) for i in items]
    await writes.highlights(result, metadata)


async def _highlight_tags(writes: WriteThrough, result: Any, given: Given) -> None:
    # The answer is only the tag list; the highlight itself (its new updated_at too) costs
    # one request.
    highlight_id = str(given["highlight_id"])
    await writes.tags_of("highlight", highlight_id, result)
    await writes.highlights([await writes.hosted.get_highlight(highlight_id)])


async def _article_tags(writes: WriteThrough, result: Any, given: Given) -> None:
    article_id = str(given["article_id"])
    await writes.tags_of("article", article_id, result)
    await writes.article(
        await writes.hosted.get_article(article_id, max_chars=contract.MIN_MAX_CHARS)
    )


async def _source(writes: WriteThrough, result: Any, given: Given) -> None:
    await writes.source(result, _metadata(given))


async def _saved(writes: WriteThrough, result: Any, given: Given) -> None:
    await writes.saved(result)


async def _article(writes: WriteThrough, result: Any, given: Given) -> None:
    await writes.article(result)


async def _tag(writes: WriteThrough, result: Any, given: Given) -> None:
    await writes.tag(result)


async def _highlight_deleted(writes: WriteThrough, result: Any, given: Given) -> None:
    await writes.highlight_deleted(str(given["highlight_id"]))


async def _source_deleted(writes: WriteThrough, result: Any, given: Given) -> None:
    await writes.source_deleted(str(given["source_id"]))


async def _tag_deleted(writes: WriteThrough, result: Any, given: Given) -> None:
    await writes.tag_deleted(str(given["tag_id"]))


_STORE: dict[str, Callable[[WriteThrough, Any, Given], Awaitable[None]]] = {
    "create_highlight": _highlight,
    "update_highlight": _highlight,
    "create_highlights_bulk": _highlights_bulk,
    "delete_highlight": _highlight_deleted,
    "add_highlight_tags": _highlight_tags,
    "remove_highlight_tags": _highlight_tags,
    "create_source": _source,
    "update_source": _source,
    "delete_source": _source_deleted,
    "save_article": _saved,
    "update_article": _article,
    "add_article_tags": _article_tags,
    "remove_article_tags": _article_tags,
    "create_tag": _tag,
    "update_tag": _tag,
    "delete_tag": _tag_deleted,
}


def _log_refresh_outcome(task: asyncio.Task[Any]) -> None:
    """Collect a background refresh's outcome, so a failure nobody waited for is logged
    once (never with the key: client errors carry none) rather than lost."""
    if task.cancelled():
        return
    error = task.exception()
    if error is not None:
        log.warning("background mirror refresh failed: %s", error)
    elif not getattr(task.result(), "finished", True):
        log.info("background mirror refresh paused at its time limit; the next one resumes it")


def _read_method(name: str) -> Any:
    async def method(self: MirroredClient, *args: Any, **kwargs: Any) -> Any:
        await self.freshen()
        return await getattr(ScreviClient, name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = getattr(ScreviClient, name).__doc__
    return method


def _write_method(name: str) -> Any:
    async def method(self: MirroredClient, *args: Any, **kwargs: Any) -> Any:
        return await self._write(name, args, kwargs)

    method.__name__ = name
    method.__doc__ = getattr(ScreviClient, name).__doc__
    return method


def _route_endpoints() -> None:
    """Give `MirroredClient` every endpoint method of the client, routed by its mark: reads
    freshen the copy first, writes go to Screvi first, fixed answers are the copy's own.
    A method `MirroredClient` defines itself (`get_article`) is kept as it is."""
    for name, access in endpoint_methods(ScreviClient).items():
        if name in vars(MirroredClient):
            continue
        if access == "read":
            setattr(MirroredClient, name, _read_method(name))
        elif access == "write":
            setattr(MirroredClient, name, _write_method(name))


_route_endpoints()


def check_mirror(path: Path, api_key: str | None, base_url: str) -> dict[str, str]:
    """Refuse to serve a file that is not a mirror, or a mirror of another account."""
    if not path.exists():  # not created just to say so
        raise MirrorMismatch(
            f"{path} is not a mirror yet: run `screvi-mcp sync --library {path}` first"
        )
    library = Library.open(path)
    try:
        state = store.read_state(library.connection())
    finally:
        library.close()
    mirrored = state.get(store.STATE_BASE_URL)
    if mirrored is None:
        raise MirrorMismatch(
            f"{path} is not a mirror yet: run `screvi-mcp sync --library {path}` first"
        )
    if api_key:
        if normalise_base_url(base_url) != mirrored:
            raise MirrorMismatch(
                f"{path} mirrors {mirrored}, not {normalise_base_url(base_url)} (SCREVI_BASE_URL)"
            )
        if state.get(store.STATE_KEY_FINGERPRINT) != key_fingerprint(api_key):
            raise MirrorMismatch(
                f"{path} was synced with another API key; run `screvi-mcp sync --library "
                f"{path} --new-key` if it is the same account"
            )
    return state


async def mirrored_client(
    path: Path,
    *,
    api_key: str | None,
    base_url: str,
    policy: FreshnessPolicy | None = None,
    sync_settings: SyncSettings | None = None,
) -> MirroredClient:
    """A started `MirroredClient` over the mirror at `path` (see `check_mirror` first)."""
    from screvi_mcp.local.api.seam import EmbeddedLibrary

    # The hosted limit (100/min) guards Screvi; local reads of a mirror are not Screvi's
    # traffic, and sparing that limit is a reason to use a mirror at all.
    served = EmbeddedLibrary(path, rate_limit_per_minute=LOCAL_READS_PER_MINUTE)
    await served.start()
    try:
        library: Library = served.app.state.library
        return MirroredClient(
            library=library,
            hosted_key=api_key,
            hosted_base_url=base_url,
            policy=policy or FreshnessPolicy(),
            sync_settings=sync_settings or SyncSettings(),
            **{**served.client_options(), "rate_limit": None},
        )
    except BaseException:
        await served.aclose()
        raise
