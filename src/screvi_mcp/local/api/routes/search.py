"""/search: hybrid search over highlights (the ranking lives in local/search)."""

from __future__ import annotations

from starlette.routing import Route

from screvi_mcp.contract import (
    DEFAULT_MIN_RELEVANCE,
    DEFAULT_PER_PAGE,
    MAX_QUERY_CHARS,
    MAX_SEARCH_PER_PAGE,
    MAX_SOURCE_NAME,
    MAX_TAG_NAME,
    SOURCE_TYPES,
)
from screvi_mcp.local.api.error_answers import invalid_parameter
from screvi_mcp.local.api.request_pipeline import Call, Reply, endpoint
from screvi_mcp.local.search import keyword_only
from screvi_mcp.local.search.backlog import embedding_backlog
from screvi_mcp.local.storage.store import wire
from screvi_mcp.local.storage.store.pages import pagination
from screvi_mcp.models import EMBEDDING_BACKLOG_HEADER, KEYWORD_ONLY_HEADER

MAX_QUERY_LENGTH = MAX_QUERY_CHARS


def search_highlights(call: Call) -> Reply:
    params = call.params
    raw_q = call.params.string("q")
    if raw_q is None:
        raise invalid_parameter({"q": "is required: the text to search for"})
    if len(raw_q) > MAX_QUERY_LENGTH:
        raise invalid_parameter({"q": f"must be at most {MAX_QUERY_LENGTH} characters"})
    # Imported at the first search, not with the app: a one-shot reader of the library
    # (export, review) never searches and should not load the search engine's modules.
    from screvi_mcp.local.search.engine import SearchQuery, search

    query = SearchQuery(
        q=raw_q,
        source=params.string("source", max_length=MAX_SOURCE_NAME),
        tag=params.string("tag", max_length=MAX_TAG_NAME),
        types=params.choices("types", SOURCE_TYPES),
        favorite=params.boolean("favorite"),
        min_relevance=params.number(
            "min_relevance", default=DEFAULT_MIN_RELEVANCE, minimum=0.0, maximum=1.0
        ),
        verify=bool(params.boolean("verify")),
        page=params.page(),
        per_page=params.per_page(default=DEFAULT_PER_PAGE, maximum=MAX_SEARCH_PER_PAGE),
    )
    hits, total = search(call.library, query)
    by_seq = wire.highlights_by_seq(call.library.connection(), [hit.seq for hit in hits])
    results = []
    for hit in hits:
        item = by_seq.get(hit.seq)
        if item is None:
            continue  # deleted between ranking and rendering
        results.append(
            {
                **item,
                "similarity": hit.similarity,
                "match_type": hit.match_type,
                "relevance": hit.relevance,
                "verified_relevance": hit.verified_relevance,
            }
        )
    body = {"data": results, "pagination": pagination(total, query.page, query.per_page)}
    reason = keyword_only.reason_for(call.library)
    # An extension header (the spec's body is untouched): a client can tell its agent why
    # only exact words match, rather than advise a lower min_relevance that cannot help.
    headers = {KEYWORD_ONLY_HEADER: _latin1(reason)} if reason else {}
    if not reason:
        # Results must not look complete while many recent highlights have no vector yet.
        backlog = embedding_backlog(call.library)
        if backlog.worth_saying:
            headers[EMBEDDING_BACKLOG_HEADER] = backlog.header()
    return Reply(body, headers=headers)


def _latin1(text: str) -> str:
    return text.encode("latin-1", "replace").decode("latin-1").replace("\n", " ")


routes = [Route("/search", endpoint(search_highlights), methods=["GET"])]
