"""GET /ext/articles/search: passage search inside saved articles.

An EXTENSION of the Screvi API, served by the embedded library and mirrors only: the hosted
API has no such endpoint, and the MCP tool never calls it there (it falls back to
GET /articles?q=). The `/ext/` prefix marks every path that is not in the spec.
"""

from __future__ import annotations

from starlette.routing import Route

from screvi_mcp import contract
from screvi_mcp.extensions import ARTICLE_SEARCH_MAX_PER_PAGE, ARTICLE_SEARCH_PATH
from screvi_mcp.local.api.error_answers import invalid_parameter
from screvi_mcp.local.api.request_pipeline import Call, Reply, endpoint
from screvi_mcp.local.passages import attach
from screvi_mcp.local.passages.search import (
    DEFAULT_MIN_RELEVANCE,
    PassageFilters,
    PassageQuery,
    search_passages,
)
from screvi_mcp.local.storage.store.pages import pagination

PATH = f"/{ARTICLE_SEARCH_PATH}"


def search_articles(call: Call) -> Reply:
    params = call.params
    q = params.string("q")
    if q is None or not q.strip():
        raise invalid_parameter({"q": "is required: the words or meaning to look for"})
    if len(q) > contract.MAX_QUERY_CHARS:
        raise invalid_parameter({"q": f"must be at most {contract.MAX_QUERY_CHARS} characters"})
    query = PassageQuery(
        q=q,
        filters=PassageFilters(
            tag=params.string("tag", max_length=contract.MAX_TAG_NAME),
            status=params.choice("status", list(contract.ARTICLE_STATUSES)),
            favorite=params.boolean("favorite"),
            saved_since=params.timestamp("saved_since"),
            saved_before=params.timestamp("saved_before"),
        ),
        min_relevance=params.number(
            "min_relevance", default=DEFAULT_MIN_RELEVANCE, minimum=0.0, maximum=1.0
        ),
        page=params.page(),
        per_page=params.per_page(default=10, maximum=ARTICLE_SEARCH_MAX_PER_PAGE),
    )
    index, foreign = attach.index_for(call.library), attach.multilingual_for(call.library)
    conn = call.library.connection()
    hits, total = search_passages(conn, index, query, root_url=call.root_url, foreign=foreign)
    return Reply(
        {
            "data": hits,
            "pagination": pagination(total, query.page, query.per_page),
            # Whether meaning was searched at all, and how many passages still wait for it.
            "semantic": index is not None,
            "passages_waiting": sum(i.pending() for i in (index, foreign) if i is not None),
        }
    )


routes = [Route(PATH, endpoint(search_articles), methods=["GET"])]
