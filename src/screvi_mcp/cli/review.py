"""`screvi-mcp review`: today's review in the terminal, without an agent.

Prints today's review (stdout: it is what the user asked for), or a Markdown daily note;
`--rate ID ANSWER` records answers from a script, and on a terminal (or with
`--interactive`) the review asks for each answer in turn. The backend is chosen as the MCP
server chooses it: SCREVI_API_KEY for the hosted API, `--mirror` for a mirror, else the
embedded library.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from screvi_mcp import config
from screvi_mcp.cli.common import add_library_option
from screvi_mcp.review.answers import ANSWERS

if TYPE_CHECKING:
    from screvi_mcp.client import ScreviClient
    from screvi_mcp.review.daily import DailyReview, ReviewPlace, Settings, Today
    from screvi_mcp.review.render import Format

# What the interactive review accepts for each answer (and s to skip, q to stop).
KEYS = {"1": "again", "2": "hard", "3": "good", "4": "easy", "d": "discard"}
CLI_HOW_TO_ANSWER = (
    "Answer with `screvi-mcp review --rate HIGHLIGHT_ID ANSWER` (again, hard, good, easy or "
    "discard), or run `screvi-mcp review --interactive`."
)
PROMPT = "[1] again [2] hard [3] good [4] easy [d] discard (never again) [s] skip [q] quit: "


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Today's review of your highlights, scheduled by spaced repetition (FSRS): due ones "
        "first, then new ones spread across sources. Answer each on a terminal, or with "
        "--rate; the review resumes where you stopped. With SCREVI_API_KEY it reviews the "
        "hosted account (state kept in a file beside the default library)."
    )
    add_library_option(parser, default=f"${config.LIBRARY_ENV}, or the mirror's with --mirror")
    parser.add_argument(
        "--mirror", action="store_true", default=argparse.SUPPRESS, help="review a mirror"
    )
    parser.add_argument("--markdown", action="store_true", help="print a Markdown daily note")
    parser.add_argument("--detailed", action="store_true", help="tags, source ids, memory")
    parser.add_argument("--size", type=int, metavar="N", help="highlights a day (default 10)")
    parser.add_argument(
        "--new", type=int, metavar="N", help="new highlights a day at most (default 10)"
    )
    parser.add_argument(
        "--rate",
        nargs=2,
        action="append",
        metavar=("HIGHLIGHT_ID", "ANSWER"),
        help=f"record an answer ({', '.join(ANSWERS)}); repeatable",
    )
    parser.add_argument(
        "--interactive", action="store_true", help="ask for each answer (default on a terminal)"
    )
    # Replays and tests: the review as of this moment (ISO 8601), not the clock's.
    parser.add_argument("--now", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Exit codes: 0 done, 1 refused or failed (one line on stderr), 2 bad usage."""
    import anyio

    from screvi_mcp.client import ScreviError

    try:
        settings = _settings(args)
    except ValueError as bad:
        print(f"screvi-mcp: {bad}", file=sys.stderr)
        return 2
    for _, answer in args.rate or []:
        if answer not in ANSWERS:
            print(
                f"screvi-mcp: answer {answer!r}: use one of {', '.join(ANSWERS)}", file=sys.stderr
            )
            return 2
    from screvi_mcp.mirror.identity import MirrorMismatch

    try:
        return anyio.run(_review, args, settings)
    except ScreviError as error:
        from screvi_mcp.server.errors import describe

        print(f"screvi-mcp: {describe(error)}", file=sys.stderr)
        return 1
    except (MirrorMismatch, config.ConfigurationProblem) as refusal:
        print(f"screvi-mcp: {refusal}", file=sys.stderr)
        return 1


def _settings(args: argparse.Namespace) -> Settings:
    import dataclasses

    from screvi_mcp.local.storage.clock import parse_timestamp
    from screvi_mcp.review.daily import MAX_SIZE, Settings

    settings = Settings()
    if args.size is not None:
        if not 1 <= args.size <= MAX_SIZE:
            raise ValueError(f"--size must be from 1 to {MAX_SIZE}")
        settings = dataclasses.replace(settings, size=args.size)
    if args.new is not None:
        if not 0 <= args.new <= MAX_SIZE:
            raise ValueError(f"--new must be from 0 to {MAX_SIZE}")
        settings = dataclasses.replace(settings, new_per_day=args.new)
    if args.now:
        try:
            moment = parse_timestamp(args.now)
        except ValueError:
            raise ValueError(f"--now must be an ISO 8601 date-time, got {args.now!r}") from None
        settings = dataclasses.replace(settings, now=lambda: moment.astimezone(UTC))
    return settings


@asynccontextmanager
async def _client_and_place(
    args: argparse.Namespace,
) -> AsyncIterator[tuple[ScreviClient, ReviewPlace]]:
    from screvi_mcp.client import ScreviClient
    from screvi_mcp.review.daily import ReviewPlace

    api_key = os.environ.get(config.API_KEY_ENV, "").strip() or None
    base_url = os.environ.get(config.BASE_URL_ENV, "").strip() or None
    library = getattr(args, "library", None)
    client: ScreviClient
    if getattr(args, "mirror", False):
        from screvi_mcp.contract import HOSTED_BASE_URL
        from screvi_mcp.mirror.serving import check_mirror, mirrored_client

        path = Path(library).expanduser() if library else config.default_mirror_path()
        state = check_mirror(path, api_key, base_url or HOSTED_BASE_URL)
        client = await mirrored_client(
            path, api_key=api_key, base_url=base_url or state.get("base_url") or HOSTED_BASE_URL
        )
        place = ReviewPlace.of(mirror_path=path)
    elif api_key:
        client = ScreviClient.hosted(api_key, **({"base_url": base_url} if base_url else {}))
        place = ReviewPlace.of(api_key=api_key, base_url=base_url)
    else:
        from screvi_mcp.embedded import embedded_client
        from screvi_mcp.local.storage import preflight

        path = config.library_path(library)
        # A folder, or a file that is not a library, is refused in one line before opening.
        preflight.check_library_path(path, create_parents=config.library_path_is_default(library))
        # A review reads highlights and writes only its own state: no search model to load
        # and no article to fetch (a start-up's largest costs), as for an export.
        client = await embedded_client(path, background_work=False)
        place = ReviewPlace.of(library_path=path)
    async with client:
        yield client, place


async def _review(args: argparse.Namespace, settings: Settings) -> int:
    from screvi_mcp.review import render
    from screvi_mcp.review.daily import DailyReview

    fmt: Format = "detailed" if args.detailed else "concise"
    async with _client_and_place(args) as (client, place):

        def review() -> DailyReview:
            # One per answer: each reads the clock (and so the day) once.
            return DailyReview(client, place, settings)

        for highlight_id, answer in args.rate or []:
            recorded = await review().record(highlight_id, answer)
            print(render.recorded_text(recorded, fmt, next_one=False))
        if args.rate:
            return 0
        today = await review().today(answered=args.markdown)
        if args.markdown:
            print(render.markdown(today), end="")
        elif args.interactive or (sys.stdin.isatty() and sys.stdout.isatty()):
            await _interactive(review, today, fmt, sys.stdin, sys.stdout)
        else:
            print(render.today_text(today, fmt, CLI_HOW_TO_ANSWER))
    return 0


async def _interactive(
    review: Callable[[], DailyReview], today: Today, fmt: Format, stdin: TextIO, out: TextIO
) -> None:
    """One highlight at a time: show it, read an answer, record it; s skips, q stops."""
    from screvi_mcp.review import render

    left = today.left
    out.write(f"Daily review {today.day}: {today.done} done, {len(left)} left.\n")
    for number, entry in enumerate(left, today.done + 1):
        out.write("\n" + render.entry_text(entry, number, fmt) + "\n")
        while True:
            out.write(PROMPT)
            out.flush()
            key = stdin.readline().strip().lower()
            if key in ("q", ""):  # "" is the end of input
                out.write("Stopped; `screvi-mcp review` resumes here.\n")
                return
            if key == "s" or key in KEYS:
                break
        if key == "s":
            continue
        recorded = await review().record(entry.item.highlight_id, KEYS[key])
        out.write(render.recorded_text(recorded, fmt, next_one=False) + "\n")
    out.write("Today's review is finished.\n")
