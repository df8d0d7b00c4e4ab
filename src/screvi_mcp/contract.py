"""The Screvi public API's facts that every layer shares: limits, defaults and enums.

One home, beside the wire models (`models.py`), for what `../shared/spec/screvi-public-api.md`
fixes: the client checks these bounds before sending, the embedded library enforces them, and
the MCP tools publish them in their schemas. Change a fact here and every layer follows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal, get_args

# Where the hosted API lives, and what a scoped (writing) key starts with (spec, section 5).
HOSTED_BASE_URL: Final = "https://api.screvi.com/api/v1"
SCOPED_KEY_PREFIX: Final = "sk_live_"

# Limits of the spec, section 8.
MAX_PER_PAGE: Final = 100
MAX_SEARCH_PER_PAGE: Final = 50
DEFAULT_PER_PAGE: Final = 20
# GET /sources/{id} pages the source's highlights with a larger default (section 4).
DEFAULT_SOURCE_HIGHLIGHTS_PER_PAGE: Final = 50
MAX_RANDOM_COUNT: Final = 20
MAX_BULK: Final = 100
MAX_QUERY_CHARS: Final = 1000
MAX_HIGHLIGHT_TEXT: Final = 20000
MAX_TAG_NAME: Final = 100
MIN_MAX_CHARS: Final = 1000
RATE_LIMIT_PER_MINUTE: Final = 100
# Lengths of body fields, in characters: POST /sources, PATCH /articles.
MAX_SOURCE_NAME: Final = 500
MAX_AUTHOR: Final = 300
MAX_BOOK_CODE: Final = 20  # isbn, asin
MAX_NOTE: Final = 10000  # a source's or an article's note (a highlight's is MAX_HIGHLIGHT_TEXT)
MAX_ARTICLE_TITLE: Final = 500
MAX_EXCERPT: Final = 2000

# Not in the spec: an RFC 7240 preference a client sends on GET /articles/{id} when it reads
# only the body. The spec puts every highlight of the article in each answer, so reading a long
# article chunk by chunk would load, send and parse them all again per chunk. The embedded
# library honours the preference (leaves `highlights` out, says so in `Preference-Applied`);
# a server that does not know it ignores it, as RFC 7240 requires, and the client drops the
# field itself, so the answer is the same either way.
OMIT_HIGHLIGHTS_PREFERENCE: Final = "omit-highlights"

# Search's default semantic threshold (spec, section 4: GET /search).
DEFAULT_MIN_RELEVANCE: Final = 0.72

# Enums of the spec, section 2, as the type checker sees them.
SourceTypeName = Literal[
    "book", "article", "tweet", "self", "podcast", "video", "custom", "youtube", "pdf"
]
CreatableSourceType = Literal["book", "podcast", "video", "tweet", "self", "custom"]
SourceListType = Literal[
    "book", "article", "tweet", "podcast", "video", "self", "custom", "youtube", "author", "topics"
]
ArticleStatusName = Literal["unread", "reading", "read", "archived"]
HomeStatusName = Literal["inbox", "later", "archive"]
ArticleSortKey = Literal[
    "saved_at", "published_date", "reading_time_minutes", "highlight_count", "updated_at"
]
SortOrder = Literal["asc", "desc"]
ContentFormatName = Literal["html", "text"]

# The values of each enum, in the spec's order: the Literals above are the one definition
# (the wire models and the tools' schemas use them as they are; nothing restates them).
SOURCE_TYPES: Final[tuple[str, ...]] = get_args(SourceTypeName)
ARTICLE_STATUSES: Final[tuple[str, ...]] = get_args(ArticleStatusName)
HOME_STATUSES: Final[tuple[str, ...]] = get_args(HomeStatusName)
CONTENT_FORMATS: Final[tuple[str, ...]] = get_args(ContentFormatName)

# Types a client may create through POST /sources (articles come from POST /articles), in
# the order error messages list them.
CREATABLE_SOURCE_TYPES: Final[tuple[str, ...]] = get_args(CreatableSourceType)
# Extra values the GET /sources `type` filter accepts beyond the source types (section 4).
SOURCE_LIST_EXTRA_TYPES: Final[tuple[str, ...]] = ("author", "topics")

# Types a filter on one type also matches: `video` covers the legacy `youtube` (section 2).
TYPE_ALIASES: Final[dict[str, tuple[str, ...]]] = {"video": ("video", "youtube")}


def expand_types(types: Iterable[str]) -> list[str]:
    """The stored types a filter on `types` matches, in order, each once."""
    expanded: list[str] = []
    for name in types:
        for alias in TYPE_ALIASES.get(name, (name,)):
            if alias not in expanded:
                expanded.append(alias)
    return expanded
