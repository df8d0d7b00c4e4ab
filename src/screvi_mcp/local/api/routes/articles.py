"""/articles routes."""

from __future__ import annotations

from starlette.routing import Route

from screvi_mcp import contract
from screvi_mcp.contract import DEFAULT_PER_PAGE, MAX_PER_PAGE
from screvi_mcp.local.api.bodies import ArticleCreate, ArticleUpdate, TagsBody, parse_body
from screvi_mcp.local.api.error_answers import validation_failed
from screvi_mcp.local.api.request_pipeline import Call, Reply, endpoint
from screvi_mcp.local.storage.store import articles


def list_articles(call: Call) -> Reply:
    params = call.params
    filters = articles.ArticleFilters(
        q=params.string("q", max_length=contract.MAX_QUERY_CHARS),
        status=params.choice("status", contract.ARTICLE_STATUSES),
        home_status=params.choice("home_status", contract.HOME_STATUSES),
        favorite=params.boolean("favorite"),
        has_highlights=params.boolean("has_highlights"),
        tag=params.string("tag", max_length=contract.MAX_TAG_NAME),
        updated_since=params.timestamp("updated_since"),
        saved_since=params.timestamp("saved_since"),
        saved_before=params.timestamp("saved_before"),
        include_deleted=bool(params.boolean("include_deleted")),
        sort_by=params.choice("sort_by", list(articles.SORT_COLUMNS), default="saved_at")
        or "saved_at",
        order=params.choice("order", ["asc", "desc"], default="desc") or "desc",
    )
    items, page = articles.list_page(
        call.library.connection(),
        filters,
        params.page(),
        params.per_page(default=DEFAULT_PER_PAGE, maximum=MAX_PER_PAGE),
        root_url=call.root_url,
    )
    return Reply({"data": items, "pagination": page})


async def save_article(call: Call) -> Reply:
    """Resolves short links and reads social posts (bounded); the page is fetched later."""
    # Imported at the first save, not with the app: the fetching stack (page extraction,
    # social posts) is for saving pages, which one-shot readers of the library never do.
    from screvi_mcp.local.fetching import save as fetching_save
    from screvi_mcp.local.fetching.urls import InvalidArticleURL

    body = parse_body(ArticleCreate, call.body)
    try:
        outcome = await fetching_save.save_article(
            call.library,
            body.url,
            body.tags,
            fetcher=call.state.fetcher,
            worker=call.state.article_worker,
            tag_hook=articles.tag_saved,
        )
    except InvalidArticleURL as error:
        raise validation_failed({"url": str(error)}) from None
    return Reply({"data": outcome.response_data()}, status=outcome.status_code)


def get_article(call: Call) -> Reply:
    params = call.params
    omit_highlights = contract.OMIT_HIGHLIGHTS_PREFERENCE in call.preferences
    article = articles.get_with_content(
        call.library.connection(),
        call.path["id"],
        root_url=call.root_url,
        content_format=params.choice("format", ["html", "text"], default="html") or "html",
        start=params.integer("offset", default=0, minimum=0) or 0,
        max_chars=params.integer("max_chars", minimum=contract.MIN_MAX_CHARS),
        with_highlights=not omit_highlights,
    )
    if omit_highlights:
        return Reply(
            {"data": article},
            headers={"Preference-Applied": contract.OMIT_HIGHLIGHTS_PREFERENCE},
        )
    return Reply({"data": article})


def update_article(call: Call) -> Reply:
    body = parse_body(ArticleUpdate, call.body)
    article = articles.update(call.library, call.path["id"], body.present(), root_url=call.root_url)
    return Reply({"data": article})


def add_tags(call: Call) -> Reply:
    body = parse_body(TagsBody, call.body)
    return Reply({"data": articles.change_tags(call.library, call.path["id"], body.tags, add=True)})


def remove_tags(call: Call) -> Reply:
    body = parse_body(TagsBody, call.body)
    return Reply(
        {"data": articles.change_tags(call.library, call.path["id"], body.tags, add=False)}
    )


routes = [
    Route("/articles", endpoint(list_articles), methods=["GET"]),
    Route(
        "/articles",
        endpoint(write=True, body=True, async_handler=save_article),
        methods=["POST"],
    ),
    Route("/articles/{id}", endpoint(get_article), methods=["GET"]),
    Route("/articles/{id}", endpoint(update_article, write=True, body=True), methods=["PATCH"]),
    Route("/articles/{id}/tags", endpoint(add_tags, write=True, body=True), methods=["POST"]),
    Route("/articles/{id}/tags", endpoint(remove_tags, write=True, body=True), methods=["DELETE"]),
]
