"""The `screvi-mcp` command line: one module per command group.

stdout is reserved for command output the user asked for (a new key, a table); everything
else goes to stderr, and in MCP stdio mode nothing at all goes to stdout but the protocol.

- `serve`: the MCP server's flags and start-up (the default command), and `--help`'s
  list of environment variables;
- `library_commands`: `api`, `keys`, `sample`, `reindex` and `library`;
- `transfer`: `import` and `export`;
- `check`: `check`;
- `common`: what they share (--library, the bind address, start-up failures);
- `parsing`: one-line errors for command-line mistakes.

- `review`: `review` (today's review in the terminal; what it prints is the command's output).

- `sync`: `sync` (the mirror's command line; the engine is `mirror/sync.py`).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TextIO

from screvi_mcp import __version__
from screvi_mcp.cli import check, library_commands, transfer
from screvi_mcp.cli.common import INTERRUPTED, StartupFailed, port_problem
from screvi_mcp.cli.parsing import OneLineParser, check_options
from screvi_mcp.cli.serve import ENVIRONMENT_HELP, TOOLSET_NAMES, add_serve_options, cmd_serve

# Imported from here by scripts/serve.sh (port_problem) and tests (TOOLSET_NAMES).
__all__ = ["TOOLSET_NAMES", "build_parser", "configure_logging", "main", "port_problem"]


def cmd_sync(args: argparse.Namespace) -> int:
    from screvi_mcp.cli import sync as sync_command

    return sync_command.run(args)


def _add_sync_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from screvi_mcp.cli import sync as sync_command

    sync = commands.add_parser(
        "sync",
        help="mirror a Screvi account (SCREVI_API_KEY) into a local library, or bring the "
        "mirror up to date",
        description="Copy the account behind SCREVI_API_KEY (at SCREVI_BASE_URL, default the "
        "hosted API) into a local library through the public API: everything the first "
        "time, then only what changed. Interrupted runs continue where they stopped. Serve "
        "the mirror with `screvi-mcp --mirror`.",
    )
    sync_command.add_arguments(sync)
    sync.set_defaults(handler=cmd_sync)


def _add_review_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from screvi_mcp.cli import review as review_command

    review = commands.add_parser("review", help="today's spaced-repetition review of highlights")
    review_command.add_arguments(review)
    review.set_defaults(handler=review_command.run)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="screvi-mcp",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "An MCP server for a Screvi library of highlights, sources, saved articles and\n"
            "tags. With SCREVI_API_KEY set it talks to the hosted Screvi API (SCREVI_BASE_URL\n"
            "overrides the address); without it, to the embedded library: the Screvi API over\n"
            "a local SQLite file. Run with no command to start the MCP server on stdio."
        ),
        epilog=ENVIRONMENT_HELP,
    )
    parser.add_argument("--version", action="version", version=f"screvi-mcp {__version__}")
    add_serve_options(parser)
    parser.set_defaults(handler=cmd_serve)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    # The order here is the order `--help` lists the commands in.
    library_commands.add_commands(commands)
    transfer.add_commands(commands)
    _add_sync_command(commands)
    _add_review_command(commands)
    check.add_command(commands)
    library_commands.add_settings_command(commands)
    return parser


class OneLineFormatter(logging.Formatter):
    """A caught exception is logged as one line, `Type: message`, never as a traceback: a host
    shows stderr to the user and often to the agent, and a traceback there carries local
    paths and values. `log.exception` in the workers stays as it is."""

    def format(self, record: logging.LogRecord) -> str:
        error = record.exc_info[1] if record.exc_info else None
        message = record.getMessage()
        if error is not None:
            message = f"{message} ({type(error).__name__}: {error})"
        # A copy: other handlers may still want the record as it was.
        one_line = logging.makeLogRecord(
            {
                **record.__dict__,
                "msg": message,
                "args": None,
                "exc_info": None,
                "exc_text": None,
                "stack_info": None,
            }
        )
        return super().format(one_line)


def configure_logging(stream: TextIO = sys.stderr) -> None:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter("%(name)s: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)


def main(argv: Sequence[str] | None = None) -> int:
    configure_logging()
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    check_options(parser, argv)  # a misspelled option, named by its own command's parser
    args = parser.parse_args(argv)
    # httpx logs every request at INFO: noise in a host's log, and URLs may carry ids.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        result: int = args.handler(args)
    except StartupFailed as failure:
        print(f"screvi-mcp: {failure}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Commands that write say what was kept themselves; anything else just stops.
        print("\nscrevi-mcp: interrupted", file=sys.stderr)
        return INTERRUPTED
    return result
