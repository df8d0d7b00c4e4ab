"""The embedded library's own commands: `api`, `keys`, `sample`, `reindex` and `library`."""

from __future__ import annotations

import argparse
import sys

from screvi_mcp import contract
from screvi_mcp.cli.common import (
    DEFAULT_HOST,
    add_library_option,
    bind_address,
    check_port_free,
    checked_library_path,
    open_library,
)
from screvi_mcp.cli.parsing import key_name, port

API_PORT = 8080  # `screvi-mcp api`


def cmd_api(args: argparse.Namespace) -> int:
    import uvicorn

    from screvi_mcp.local.api.app import create_app

    bind_address(args, API_PORT)
    path = checked_library_path(args, embedded_server=True)
    check_port_free(args.host, args.port, "--port")
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

    library = open_library(args)
    record, secret = keys.create_key(library, args.name, write=args.write, legacy=args.legacy)
    library.close()
    scopes = "legacy, read-only" if record.legacy else " ".join(sorted(record.scopes))
    print(f"Created key {record.id} ({record.name}; {scopes}). It is shown once:", file=sys.stderr)
    print(secret)
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    from screvi_mcp.local.api import keys

    library = open_library(args)
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

    library = open_library(args)
    revoked = keys.revoke_key(library, args.id)
    library.close()
    if not revoked:
        print(f"screvi-mcp: no active key with id {args.id}", file=sys.stderr)
        return 1
    print(f"Revoked key {args.id}", file=sys.stderr)
    return 0


def cmd_library_subscription(args: argparse.Namespace) -> int:
    from screvi_mcp.local.api.auth import SUBSCRIPTION_SETTING

    library = open_library(args)
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
    path = checked_library_path(args, embedded_server=True)
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

    library = open_library(args)
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


def cmd_library_rate_limit(args: argparse.Namespace) -> int:
    from screvi_mcp.local.api.app import RATE_LIMIT_SETTING

    library = open_library(args)
    library.set_setting(RATE_LIMIT_SETTING, str(args.per_minute))
    library.close()
    print(f"Rate limit is now {args.per_minute} requests per minute per key", file=sys.stderr)
    return 0


def cmd_install_model(args: argparse.Namespace) -> int:
    from screvi_mcp.local.search.mpnet.install import install_model

    return install_model(lambda line: print(line, file=sys.stderr))


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """`api`, `keys`, `sample` and `reindex`, in the order `--help` lists them."""
    api = commands.add_parser("api", help="serve the embedded library's REST API over HTTP")
    add_library_option(api)
    # Unset unless given here, so that a --host/--port given before `api` holds (as --library).
    api.add_argument(
        "--host", default=argparse.SUPPRESS, help=f"address to bind (default {DEFAULT_HOST})"
    )
    api.add_argument(
        "--port", type=port, default=argparse.SUPPRESS, help=f"port (default {API_PORT})"
    )
    api.add_argument(
        "--rate-limit",
        type=int,
        default=None,
        metavar="N",
        help="requests per minute per key (default: the library's setting, else "
        f"{contract.RATE_LIMIT_PER_MINUTE})",
    )
    api.add_argument(
        "--allow-private-networks",
        action="store_true",
        help="let saved articles be fetched from loopback and private-network addresses "
        "(refused by default; also SCREVI_ALLOW_PRIVATE_NETWORKS=1)",
    )
    api.set_defaults(handler=cmd_api)

    _add_keys_command(commands)

    sample = commands.add_parser(
        "sample", help="load a small sample library (public-domain passages) to try search"
    )
    add_library_option(sample)
    sample.set_defaults(handler=cmd_sample)

    reindex = commands.add_parser(
        "reindex",
        help="embed the library's highlights for semantic search (after changing the model)",
    )
    add_library_option(reindex)
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


def add_settings_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """`library`: listed last in `--help`, after the commands of other modules."""
    library = commands.add_parser("library", help="library settings")
    library_commands = library.add_subparsers(
        dest="library_command", metavar="SETTING", required=True
    )
    subscription = library_commands.add_parser(
        "subscription",
        help="make the account lack (inactive) or have (active) a subscription, for testing "
        "clients against 403 subscription_required",
    )
    add_library_option(subscription)
    subscription.add_argument("state", choices=["active", "inactive"])
    subscription.set_defaults(handler=cmd_library_subscription)
    rate = library_commands.add_parser("rate-limit", help="requests per minute per key")
    add_library_option(rate)
    rate.add_argument("per_minute", type=int)
    rate.set_defaults(handler=cmd_library_rate_limit)


def _add_keys_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    keys = commands.add_parser("keys", help="manage the embedded library's API keys")
    key_commands = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    create = key_commands.add_parser("create", help="create a key and print it once")
    add_library_option(create)
    create.add_argument(
        "--name", required=True, type=key_name, help="a name to recognise the key by"
    )
    create.add_argument("--write", action="store_true", help="grant the write scope")
    create.add_argument(
        "--legacy", action="store_true", help="a legacy account-wide key (read-only forever)"
    )
    create.set_defaults(handler=cmd_keys_create)
    listing = key_commands.add_parser("list", help="list keys (never their secrets)")
    add_library_option(listing)
    listing.set_defaults(handler=cmd_keys_list)
    revoke = key_commands.add_parser("revoke", help="revoke a key by id")
    add_library_option(revoke)
    revoke.add_argument("id", help="the key's id, from `keys list`")
    revoke.set_defaults(handler=cmd_keys_revoke)
