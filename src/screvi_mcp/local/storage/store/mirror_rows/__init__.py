"""Writing a mirror of a Screvi account: items arrive with their own ids and timestamps.

The sync engine (`screvi_mcp.mirror`) reads pages through the public API and hands them here
as wire dictionaries (the spec's field names). Every call is one transaction: a page of
items lands whole or not at all, together with the resume point the caller passes in
`state`, so a run killed at any moment restarts from a page that was stored. Listeners
(the semantic index) are told after the commit, as for every other write, so mirrored
highlights are embedded locally.

Upserts are idempotent: storing the same page twice changes nothing. Tombstones
(`deleted: true`) soft-delete what the mirror has and are ignored for items it never had.
"""

from screvi_mcp.local.storage.store.mirror_rows.articles import (
    articles_needing_detail,
    count_articles_needing_detail,
    store_article_detail,
    upsert_articles,
)
from screvi_mcp.local.storage.store.mirror_rows.highlights import upsert_highlights
from screvi_mcp.local.storage.store.mirror_rows.rows import Applied, Item
from screvi_mcp.local.storage.store.mirror_rows.sources import upsert_sources
from screvi_mcp.local.storage.store.mirror_rows.state import (
    STATE_BASE_URL,
    STATE_KEY_FINGERPRINT,
    holds_data,
    is_mirror,
    read_state,
    write_state,
)
from screvi_mcp.local.storage.store.mirror_rows.tags import (
    delete_tag,
    replace_tags,
    set_item_tags,
    set_tag_members,
    tag_counts,
    unknown_tag_ids,
    upsert_tag,
)

__all__ = [
    "STATE_BASE_URL",
    "STATE_KEY_FINGERPRINT",
    "Applied",
    "Item",
    "articles_needing_detail",
    "count_articles_needing_detail",
    "delete_tag",
    "holds_data",
    "is_mirror",
    "read_state",
    "replace_tags",
    "set_item_tags",
    "set_tag_members",
    "store_article_detail",
    "tag_counts",
    "unknown_tag_ids",
    "upsert_articles",
    "upsert_highlights",
    "upsert_sources",
    "upsert_tag",
    "write_state",
]
