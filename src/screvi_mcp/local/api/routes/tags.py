"""/tags routes."""

from __future__ import annotations

from starlette.routing import Route

from screvi_mcp.local.api.bodies import TagCreate, TagUpdate, parse_body
from screvi_mcp.local.api.error_answers import not_found
from screvi_mcp.local.api.request_pipeline import Call, Reply, endpoint
from screvi_mcp.local.storage.ids import is_uuid
from screvi_mcp.local.storage.store import tags


def _tag_id(call: Call) -> str:
    tag_id = call.path["id"]
    if not is_uuid(tag_id):
        raise not_found("Tag", tag_id)
    return tag_id.lower()


def list_tags(call: Call) -> Reply:
    return Reply({"data": tags.list_all(call.library.connection())})


def create_tag(call: Call) -> Reply:
    body = parse_body(TagCreate, call.body)
    with call.library.write() as conn:
        created, tag_id = tags.create_or_get(conn, body.name, body.color)
    tag = tags.get_with_counts(call.library.connection(), tag_id)
    return Reply({"data": tag}, status=201 if created else 200)


def update_tag(call: Call) -> Reply:
    tag_id = _tag_id(call)
    body = parse_body(TagUpdate, call.body)
    with call.library.write() as conn:
        tags.update(conn, tag_id, body.present())
    return Reply({"data": tags.get_with_counts(call.library.connection(), tag_id)})


def delete_tag(call: Call) -> Reply:
    tag_id = _tag_id(call)
    with call.library.write() as conn:
        result = tags.delete(conn, tag_id)
    return Reply({"data": result})


routes = [
    Route("/tags", endpoint(list_tags), methods=["GET"]),
    Route("/tags", endpoint(create_tag, write=True, body=True), methods=["POST"]),
    Route("/tags/{id}", endpoint(update_tag, write=True, body=True), methods=["PATCH"]),
    Route("/tags/{id}", endpoint(delete_tag, write=True), methods=["DELETE"]),
]
