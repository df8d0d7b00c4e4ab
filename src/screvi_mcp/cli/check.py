"""`screvi-mcp check`: does this set-up work? One line per part, each with its fix.

It reads and never writes: the library and a mirror are opened read-only (a file that does
not exist yet is not created), the port is bound and released at once, and the hosted API is
contacted only when asked (`--online`: one authenticated request). The server itself
contacts nothing at start-up; this command is where a user asks for that.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from screvi_mcp import config
from screvi_mcp.cli.common import DEFAULT_HOST, port_problem
from screvi_mcp.cli.parsing import port
from screvi_mcp.cli.serve import SERVE_PORT

# The one request `--online` makes gets this long in all (no patient retries: a set-up
# check should answer in seconds).
ONLINE_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Finding:
    part: str
    ok: bool
    text: str  # what was found, and when not ok what to do

    def line(self) -> str:
        return f"{'ok     ' if self.ok else 'PROBLEM'}  {self.part}: {self.text}"


def add_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser(
        "check",
        help="say whether the set-up works: library, models, hosted key, mirror, port",
        description="Check the set-up without changing anything: the library file, the "
        "installed models, the hosted key and base URL (contacted only with --online), a "
        "mirror's state and the HTTP port. Each line says what to fix; the exit status is 1 "
        "when something is wrong.",
    )
    parser.add_argument(
        "--library",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help=f"the library file (default: ${config.LIBRARY_ENV} or the default location)",
    )
    parser.add_argument(
        "--mirror",
        metavar="PATH",
        help="a mirror made by `screvi-mcp sync` (default: the sync's default, when it exists)",
    )
    parser.add_argument(
        "--online",
        action="store_true",
        help=f"make one authenticated request with ${config.API_KEY_ENV} to "
        f"${config.BASE_URL_ENV} (default: nothing is contacted)",
    )
    # Unset unless given here: a --host/--port given before `check` holds (as for `api`).
    parser.add_argument(
        "--host", default=argparse.SUPPRESS, help="the MCP server's HTTP address to try"
    )
    parser.add_argument(
        "--port", type=port, default=argparse.SUPPRESS, help="the MCP server's HTTP port"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    findings = [
        check_library(config.library_path(getattr(args, "library", None))),
        check_models(),
        *check_hosted(online=args.online),
        *check_mirror(args.mirror),
        check_port(
            getattr(args, "host", None) or DEFAULT_HOST,
            SERVE_PORT if getattr(args, "port", None) is None else args.port,
        ),
    ]
    for finding in findings:
        print(finding.line())
    return 0 if all(finding.ok for finding in findings) else 1


def _counts(path: Path) -> dict[str, int]:
    """Live highlights and what waits for a vector, read without writing a byte."""
    from screvi_mcp.local.storage import db

    conn = db.read_only(path)
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        counts = {"highlights": 0, "waiting": 0}
        if "highlights" in tables:
            counts["highlights"] = conn.execute(
                "SELECT count(*) FROM highlights WHERE deleted_at IS NULL"
            ).fetchone()[0]
        if "embedding_queue" in tables:
            counts["waiting"] = conn.execute("SELECT count(*) FROM embedding_queue").fetchone()[0]
        return counts
    finally:
        conn.close()


def check_library(path: Path, part: str = "library") -> Finding:
    from screvi_mcp.local.storage import preflight

    if not path.exists() and path == config.default_library_path():
        return Finding(part, True, f"{path} does not exist yet; it is created on first use")
    try:
        preflight.check_library_path(path)  # a missing folder, or one not writable, is named
        if not path.exists():
            return Finding(part, True, f"{path} does not exist yet; it is created on first use")
        counts = _counts(path)
    except config.ConfigurationProblem as problem:
        return Finding(part, False, str(problem))
    except sqlite3.Error as exc:
        return Finding(part, False, f"{path} cannot be read ({exc})")
    waiting = counts["waiting"]
    backlog = f"; {waiting:,} waiting to be embedded (search by meaning lags)" if waiting else ""
    return Finding(part, True, f"{path}: {counts['highlights']:,} highlights{backlog}")


def check_models() -> Finding:
    from screvi_mcp.local.storage import preflight

    try:
        preflight.check_local_extra()
        preflight.check_model_directories()
        preflight.check_multilingual()
        preflight.check_english_model()
    except config.ConfigurationProblem as problem:
        return Finding("models", False, str(problem))
    from screvi_mcp.local.search.mpnet import describe_english_model

    multilingual = (
        "installed" if preflight.multilingual_model_present() else "not installed (optional)"
    )
    return Finding("models", True, f"{describe_english_model()}; multilingual {multilingual}")


def check_hosted(*, online: bool) -> list[Finding]:
    api_key = os.environ.get(config.API_KEY_ENV, "").strip()
    base_url = os.environ.get(config.BASE_URL_ENV, "").strip()
    if not api_key:
        return [
            Finding(
                "hosted",
                True,
                f"{config.API_KEY_ENV} is not set: the server uses the embedded library",
            )
        ]
    from screvi_mcp.contract import HOSTED_BASE_URL

    try:
        if base_url:
            config.check_base_url(base_url)
    except config.ConfigurationProblem as problem:
        return [Finding("hosted", False, str(problem))]
    where = base_url or HOSTED_BASE_URL
    if not online:
        return [
            Finding(
                "hosted",
                True,
                f"key set for {where} (not contacted; add --online to try it with one request)",
            )
        ]
    import anyio

    return [anyio.run(_try_key, api_key, where)]


async def _try_key(api_key: str, base_url: str) -> Finding:
    """One authenticated request; what its answer means, the key never shown."""
    from screvi_mcp.client import ScreviClient
    from screvi_mcp.client.errors import (
        InvalidApiKeyError,
        ScreviAPIError,
        ScreviConnectionError,
        SubscriptionRequiredError,
    )
    from screvi_mcp.client.retry import RetryPolicy

    client = ScreviClient.hosted(
        api_key,
        base_url=base_url,
        timeout=ONLINE_TIMEOUT_SECONDS,
        retry=RetryPolicy(max_retries=0),
    )
    try:
        async with client:
            page: Any = await client.list_highlights(per_page=1)
    except InvalidApiKeyError:
        return Finding(
            "hosted",
            False,
            f"{base_url} refused the key: create a new one and set it in {config.API_KEY_ENV}",
        )
    except SubscriptionRequiredError:
        return Finding(
            "hosted",
            False,
            f"{base_url} accepted the key, but the account has no active subscription or trial",
        )
    except ScreviConnectionError as error:
        return Finding(
            "hosted",
            False,
            f"nothing answers at {base_url} ({error}); check {config.BASE_URL_ENV} and the network",
        )
    except ScreviAPIError as error:
        return Finding("hosted", False, f"{base_url} answered {error}")
    total = getattr(getattr(page, "pagination", None), "total", None)
    seen = f" ({total} highlights)" if total is not None else ""
    return Finding("hosted", True, f"{base_url} accepted the key{seen}")


def check_mirror(explicit: str | None) -> list[Finding]:
    from screvi_mcp.local.storage import db
    from screvi_mcp.local.storage.store.mirror_rows.state import STATE_BASE_URL, STATE_LAST_SYNC

    path = Path(explicit).expanduser() if explicit else config.default_mirror_path()
    if not path.exists() and not explicit:
        return []  # no mirror: nothing to say
    sync = f"run `screvi-mcp sync --library {path}`"
    if not path.exists():
        return [Finding("mirror", False, f"{path} does not exist: {sync}")]
    readable = check_library(path, "mirror")
    if not readable.ok:
        return [readable]
    conn = db.read_only(path)
    try:
        state = {row[0]: row[1] for row in conn.execute("SELECT key, value FROM mirror_state")}
    except sqlite3.Error:
        state = {}
    finally:
        conn.close()
    if STATE_BASE_URL not in state:
        return [Finding("mirror", False, f"{path} is not a mirror yet: {sync}")]
    last = state.get(STATE_LAST_SYNC) or "never finished"
    text = f"{path} mirrors {state[STATE_BASE_URL]}; last sync {last} ({sync} to update it)"
    return [Finding("mirror", True, text)]


def check_port(host: str, number: int) -> Finding:
    problem = port_problem(host, number, "--port")
    if problem:
        return Finding("port", False, f"{problem} (only matters for the HTTP transports)")
    return Finding("port", True, f"{host}:{number} is free for --transport streamable-http or sse")
