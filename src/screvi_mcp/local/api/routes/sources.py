"""/sources routes."""

from __future__ import annotations

from starlette.routing import Route

from screvi_mcp.contract import (
    DEFAULT_PER_PAGE,
    DEFAULT_SOURCE_HIGHLIGHTS_PER_PAGE,
    MAX_PER_PAGE,
    MAX_SOURCE_NAME,
    SOURCE_LIST_EXTRA_TYPES,
    SOURCE_TYPES,
)
from screvi_mcp.local.api.bodies import SourceCreate, SourceUpdate, parse_body
from screvi_mcp.local.api.request_pipeline import Call, Reply, endpoint
from screvi_mcp.local.storage.store import sources

LIST_TYPES = (
    [name for name in SOURCE_TYPES if name != "pdf"] + list(SOURCE_LIST_EXTRA_TYPES) + ["pdf"]
)


def list_sources(call: Call) -> Reply:
    params = call.params
    filters = sources.SourceFilters(
        type=params.choice("type", LIST_TYPES),
        search=params.string("search", max_length=MAX_SOURCE_NAME),
        updated_since=params.timestamp("updated_since"),
        include_deleted=bool(params.boolean("include_deleted")),
        include_empty=bool(params.boolean("include_empty")),
    )
    items, page = sources.list_page(
        call.library.connection(),
        filters,
        params.page(),
        params.per_page(default=DEFAULT_PER_PAGE, maximum=MAX_PER_PAGE),
        include_metadata=bool(params.boolean("include_metadata")),
    )
    return Reply({"data": items, "pagination": page})


def get_source(call: Call) -> Reply:
    params = call.params
    source, page = sources.get(
        call.library.connection(),
        call.path["id"],
        params.page(),
        params.per_page(default=DEFAULT_SOURCE_HIGHLIGHTS_PER_PAGE, maximum=MAX_PER_PAGE),
        include_metadata=bool(params.boolean("include_metadata")),
    )
    return Reply({"data": source, "pagination": page})


def create_source(call: Call) -> Reply:
    body = parse_body(SourceCreate, call.body)
    return Reply({"data": sources.create(call.library, body)}, status=201)


def update_source(call: Call) -> Reply:
    body = parse_body(SourceUpdate, call.body)
    return Reply({"data": sources.update(call.library, call.path["id"], body.present())})


def delete_source(call: Call) -> Reply:
    cascade = bool(call.params.boolean("cascade"))
    return Reply({"data": sources.delete(call.library, call.path["id"], cascade=cascade)})


routes = [
    Route("/sources", endpoint(list_sources), methods=["GET"]),
    Route("/sources", endpoint(create_source, write=True, body=True), methods=["POST"]),
    Route("/sources/{id}", endpoint(get_source), methods=["GET"]),
    Route("/sources/{id}", endpoint(update_source, write=True, body=True), methods=["PATCH"]),
    Route("/sources/{id}", endpoint(delete_source, write=True), methods=["DELETE"]),
]
