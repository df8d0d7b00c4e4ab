"""`screvi-mcp sync`: the command-line face of the sync engine (mirror/sync.py): its
arguments, their checks and what a run says (stderr only; keys never shown)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from screvi_mcp import config
from screvi_mcp.cli.common import add_library_option
from screvi_mcp.cli.parsing import seconds
from screvi_mcp.contract import MAX_PER_PAGE, RATE_LIMIT_PER_MINUTE
from screvi_mcp.mirror import DEFAULT_REQUESTS_PER_MINUTE

if TYPE_CHECKING:
    from screvi_mcp.mirror.report import PhaseProgress
    from screvi_mcp.mirror.sync import SyncSettings, SyncSummary


def _tell(message: str) -> None:
    """One line for the person at the terminal: always stderr (stdout stays the command's)."""
    sys.stderr.write(message + "\n")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_library_option(parser, default=f"the mirror, {config.default_mirror_path()}")
    parser.add_argument(
        "--requests-per-minute",
        type=int,
        default=DEFAULT_REQUESTS_PER_MINUTE,
        metavar="N",
        help=f"request budget (default {DEFAULT_REQUESTS_PER_MINUTE}, under the hosted limit "
        f"of {RATE_LIMIT_PER_MINUTE}; leave room for other apps using the same key)",
    )
    parser.add_argument(
        "--per-page",
        type=int,
        default=MAX_PER_PAGE,
        metavar="N",
        help=f"items per list request (default and maximum {MAX_PER_PAGE})",
    )
    parser.add_argument(
        "--time-limit",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="stop after this long (the next run continues where this one stopped)",
    )
    parser.add_argument(
        "--new-key",
        action="store_true",
        help="accept a key other than the one the mirror was made with (a rotated key of "
        "the same account)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines, only the summary")


# The first request of a run gets a few seconds, not the sync's patient retries (up to 10
# minutes, made for an outage in the middle of a long run): when nothing answers at all, the
# address or the network is wrong, and waiting longer cannot fix that.
FIRST_CONTACT_RETRY_SECONDS = 3.0


async def _answers(api_key: str, base_url: str, settings: SyncSettings) -> bool:
    """Whether anything answers at `base_url`: one small page, briefly retried. Any answer
    counts, a refusal of the key too: the run itself checks the mirror's identity first
    and then meets the same refusal, and reports both as it always has."""
    from screvi_mcp.client.errors import ScreviAPIError, ScreviConnectionError
    from screvi_mcp.client.retry import RetryPolicy
    from screvi_mcp.mirror.sync import build_client

    brief = RetryPolicy(
        max_retries=2, base_delay=0.5, max_delay=2.0, max_total_wait=FIRST_CONTACT_RETRY_SECONDS
    )
    client, _ = build_client(api_key, base_url, dataclasses.replace(settings, retry=brief))
    try:
        async with client:
            await client.list_highlights(per_page=1)
    except ScreviConnectionError:
        return False
    except ScreviAPIError:
        pass  # an answer, even a refusal: the run reports it
    return True


def _kept(outcome: SyncSummary) -> str:
    stored = outcome.stored()
    if not stored:
        return "nothing was changed by this run."
    return f"{stored} items stored by this run before it stopped are kept."


def run(args: argparse.Namespace) -> int:
    """Exit codes: 0 finished, 3 paused at --time-limit, 1 refused or failed, 2 bad usage."""
    import anyio

    from screvi_mcp.mirror.report import PhaseProgress
    from screvi_mcp.mirror.sync import SyncSettings, SyncSummary

    checked = _checked_usage(args)
    if isinstance(checked, str):
        _tell(f"screvi-mcp sync: {checked}")
        return 2
    api_key, base_url, path = checked
    settings = SyncSettings(
        requests_per_minute=args.requests_per_minute,
        per_page=args.per_page,
        time_limit=args.time_limit,
        accept_new_key=args.new_key,
    )
    progress = PhaseProgress(enabled=not args.quiet)
    outcome = SyncSummary(full=False)  # filled by the run, read when it fails
    _tell(f"screvi-mcp sync: mirroring {base_url} into {path}")
    try:
        return anyio.run(_sync, api_key, base_url, path, settings, progress, outcome)
    except KeyboardInterrupt:
        _tell(
            "\nscrevi-mcp sync: sync interrupted. What was copied so far is kept; run again "
            "to continue from where it stopped."
        )
        return 130
    except Exception as error:
        told = _failure_text(error, outcome, path)
        if told is None:
            raise
        _tell(f"screvi-mcp sync: {told}")
        return 1


def _checked_usage(args: argparse.Namespace) -> tuple[str, str, Path] | str:
    """The key, base URL and mirror path to use, or what is wrong with the command line."""
    from screvi_mcp.client.client import DEFAULT_BASE_URL
    from screvi_mcp.local.storage import preflight

    api_key = os.environ.get(config.API_KEY_ENV, "").strip()
    if not api_key:
        return (
            f"set {config.API_KEY_ENV} to a Screvi API key (read access is enough); the "
            "mirror is written to --library PATH"
        )
    if args.requests_per_minute < 1 or not 1 <= args.per_page <= MAX_PER_PAGE:
        return (
            f"--requests-per-minute must be at least 1 and --per-page between 1 and {MAX_PER_PAGE}"
        )
    base_url = os.environ.get(config.BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL
    path = Path(args.library).expanduser() if args.library else config.default_mirror_path()
    try:
        config.check_base_url(base_url)  # as the server checks it at start-up
        # As every command that opens a library: a folder, a file that is not a library or
        # a folder that does not exist is refused before anything is created or sent.
        preflight.check_library_path(path, create_parents=not args.library)
    except config.ConfigurationProblem as problem:
        return str(problem)
    return api_key, base_url, path


async def _sync(
    api_key: str,
    base_url: str,
    path: Path,
    settings: SyncSettings,
    progress: PhaseProgress,
    outcome: SyncSummary,
) -> int:
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.mirror.report import summary_text
    from screvi_mcp.mirror.sync import build_client, run_sync

    if not await _answers(api_key, base_url, settings):
        _tell(
            f"screvi-mcp sync: nothing answers at {base_url}: check {config.BASE_URL_ENV} "
            "(its host and port) and the network; nothing was changed by this run."
        )
        return 1
    client, clock = build_client(api_key, base_url, settings)
    library = Library.open(path)
    complete = False
    try:
        async with client:
            summary = await run_sync(
                library,
                client,
                clock,
                api_key=api_key,
                settings=settings,
                reporter=progress,
                summary=outcome,
            )
        # Paused at --time-limit, or done but the embedding wait ended first.
        complete = summary.finished and not summary.waiting_for_vectors
    finally:
        progress.close(stopped=not complete)
        library.close()
    _tell(summary_text(summary))
    return 0 if summary.finished else 3


def _failure_text(error: Exception, outcome: SyncSummary, path: Path) -> str | None:
    """What a run that failed says, by the kind of failure (first match); None: not ours."""
    from screvi_mcp import extensions  # its wire models: not for building the command line
    from screvi_mcp.client.errors import (
        InvalidApiKeyError,
        MissingApiKeyError,
        ScreviError,
        SubscriptionRequiredError,
    )
    from screvi_mcp.local.storage import db
    from screvi_mcp.mirror.identity import MirrorMismatch, SyncBusy

    if db.is_damage(error):
        # Not "run again": the same pages read back the same. A mirror is a copy, so a new
        # file synced afresh replaces it.
        check = f"screvi-mcp check --mirror {shlex.quote(str(path))}"
        return (
            f"{extensions.LIBRARY_DAMAGED}: the mirror {path} is damaged ({error}), so it "
            f"cannot be read or written. Run `{check}`, then move the file aside and run sync "
            "again to make a new copy (or restore it from a backup)."
        )
    texts: tuple[tuple[tuple[type[Exception], ...], str], ...] = (
        ((MirrorMismatch, SyncBusy, config.ConfigurationProblem), "{error}"),
        # Not something a re-run fixes: the key (never shown) or the account must change.
        (
            (InvalidApiKeyError, MissingApiKeyError, SubscriptionRequiredError),
            f"refused: {{error}}. Check {config.API_KEY_ENV} (and {config.BASE_URL_ENV}, the "
            f"server it is a key for); {_kept(outcome)}",
        ),
        # The client's errors never carry the key; the message says what to do.
        (
            (ScreviError,),
            "stopped: {error}. What was copied so far is kept; run again to continue.",
        ),
    )
    return next(
        (text.format(error=error) for kinds, text in texts if isinstance(error, kinds)), None
    )
