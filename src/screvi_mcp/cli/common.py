"""What the commands share: the --library option, the bind address, the checks every
command runs before it opens a file or a port, and the exit statuses they end with."""

from __future__ import annotations

import argparse
from pathlib import Path

from screvi_mcp import config


def add_library_option(parser: argparse.ArgumentParser, default: str | None = None) -> None:
    """--library PATH; `default` says which file is used without it (the library's)."""
    parser.add_argument(
        "--library",
        metavar="PATH",
        # Unset unless given here: `screvi-mcp --library X sample` keeps the X given before
        # the command (argparse lets a subcommand's default overwrite it, and the command
        # then worked on the default library without a word).
        default=argparse.SUPPRESS,
        help="library file (default: "
        f"{default or f'${config.LIBRARY_ENV} or {config.default_library_path()}'})",
    )


DEFAULT_HOST = "127.0.0.1"


def bind_address(args: argparse.Namespace, default_port: int) -> None:
    """Fill in the defaults of --host and --port, given before or after the command."""
    if args.host is None:
        args.host = DEFAULT_HOST
    if args.port is None:
        args.port = default_port


# The exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130
# The exit status of a command refused as given (argparse's own for a usage mistake).
USAGE_ERROR = 2


class StartupFailed(Exception):
    """Raised with the one line to print before exiting with status 2."""


def checked_library_path(args: argparse.Namespace, *, embedded_server: bool = False) -> Path:
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


def open_library(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from screvi_mcp.local.storage.library import Library

    return Library.open(checked_library_path(args))


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


def check_port_free(host: str, port: int, hint: str) -> None:
    problem = port_problem(host, port, hint)
    if problem:
        raise StartupFailed(problem)
