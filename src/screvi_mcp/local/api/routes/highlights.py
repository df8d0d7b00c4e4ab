"""/highlights routes."""

from __future__ import annotations

from starlette.routing import Route

from screvi_mcp.contract import (
    DEFAULT_PER_PAGE,
    MAX_BULK,
    MAX_PER_PAGE,
    MAX_RANDOM_COUNT,
    MAX_TAG_NAME,
    SOURCE_TYPES,
)
from screvi_mcp.local.api.bodies import HighlightCreate, HighlightUpdate, TagsBody, parse_body
from screvi_mcp.local.api.error_answers import ApiError, validation_failed
from screvi_mcp.local.api.query_params import QueryParams
from screvi_mcp.local.api.request_pipeline import Call, Reply, endpoint
from screvi_mcp.local.storage.store import highlights
from screvi_mcp.local.storage.store.refusals import Invalid


def _filters(params: QueryParams, *, listing: bool) -> highlights.HighlightFilters:
    return highlights.HighlightFilters(
        source_id=params.uuid("source_id"),
        favorite=params.boolean("favorite"),
        tag_id=params.uuid("tag_id") if listing else None,
        tag=params.string("tag", max_length=MAX_TAG_NAME),
        types=None if listing else params.choices("types", SOURCE_TYPES),
        updated_since=params.timestamp("updated_since") if listing else None,
        include_deleted=bool(params.boolean("include_deleted")) if listing else False,
    )


def list_highlights(call: Call) -> Reply:
    params = call.params
    items, page = highlights.list_page(
        call.library.connection(),
        _filters(params, listing=True),
        params.page(),
        params.per_page(default=DEFAULT_PER_PAGE, maximum=MAX_PER_PAGE),
        include_metadata=bool(params.boolean("include_metadata")),
    )
    return Reply({"data": items, "pagination": page})


def random_highlights(call: Call) -> Reply:
    params = call.params
    count = params.integer("count", minimum=1, maximum=MAX_RANDOM_COUNT, clamp_maximum=True)
    picked = highlights.random_pick(
        call.library.connection(), _filters(params, listing=False), count or 1
    )
    if not picked:
        raise ApiError(404, "not_found", "No highlights match these filters")
    # An object by default; an array only when `count` was given (spec).
    return Reply({"data": picked if count is not None else picked[0]})


def get_highlight(call: Call) -> Reply:
    item = highlights.get(
        call.library.connection(),
        call.path["id"],
        include_metadata=bool(call.params.boolean("include_metadata")),
    )
    return Reply({"data": item})


def create_highlight(call: Call) -> Reply:
    body = parse_body(HighlightCreate, call.body)
    created = highlights.create_many(call.library, [body], bulk=False)
    return Reply({"data": created[0]}, status=201)


def create_bulk(call: Call) -> Reply:
    payload = call.body
    items = payload.get("highlights") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        raise validation_failed({"highlights": "is required: an array of highlight objects"})
    if len(items) > MAX_BULK:
        raise ApiError(
            413,
            "payload_too_large",
            f"At most {MAX_BULK} highlights per bulk request; got {len(items)}. "
            "Split them into several requests.",
        )
    if not items:
        raise validation_failed({"highlights": "must contain at least one highlight"})
    # Validate every item before writing any: the spec's all-or-nothing rule.
    problems: dict[str, str] = {}
    parsed: list[HighlightCreate] = []
    for index, item in enumerate(items):
        try:
            parsed.append(parse_body(HighlightCreate, item, f"highlights[{index}]"))
        except Invalid as error:
            problems.update(error.fields)
    if problems:
        raise validation_failed(problems)
    created = highlights.create_many(call.library, parsed, bulk=True)
    return Reply({"data": created}, status=201)


def update_highlight(call: Call) -> Reply:
    body = parse_body(HighlightUpdate, call.body)
    return Reply({"data": highlights.update(call.library, call.path["id"], body.present())})


def delete_highlight(call: Call) -> Reply:
    return Reply({"data": highlights.delete(call.library, call.path["id"])})


def add_tags(call: Call) -> Reply:
    body = parse_body(TagsBody, call.body)
    return Reply(
        {"data": highlights.change_tags(call.library, call.path["id"], body.tags, add=True)}
    )


def remove_tags(call: Call) -> Reply:
    body = parse_body(TagsBody, call.body)
    return Reply(
        {"data": highlights.change_tags(call.library, call.path["id"], body.tags, add=False)}
    )


routes = [
    Route("/highlights", endpoint(list_highlights), methods=["GET"]),
    Route("/highlights", endpoint(create_highlight, write=True, body=True), methods=["POST"]),
    Route("/highlights/bulk", endpoint(create_bulk, write=True, body=True), methods=["POST"]),
    Route("/highlights/random", endpoint(random_highlights), methods=["GET"]),
    # One row by id: answered on the event loop, no worker-thread hop
    # (local/api/request_pipeline.py).
    Route("/highlights/{id}", endpoint(get_highlight, no_wait=True), methods=["GET"]),
    Route("/highlights/{id}", endpoint(update_highlight, write=True, body=True), methods=["PATCH"]),
    Route("/highlights/{id}", endpoint(delete_highlight, write=True), methods=["DELETE"]),
    Route("/highlights/{id}/tags", endpoint(add_tags, write=True, body=True), methods=["POST"]),
    Route(
        "/highlights/{id}/tags", endpoint(remove_tags, write=True, body=True), methods=["DELETE"]
    ),
]
