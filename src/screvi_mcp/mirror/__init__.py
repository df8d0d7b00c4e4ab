"""A Screvi account mirrored into a local library, through the public API only.

`sync.run_sync` copies the account (first run) or what changed since the last run's cursor,
resumably and under a request budget; `identity` says which account a mirror belongs to.
The writes go through `screvi_mcp.local.storage.store.mirror_rows`, the library's own entry
point for items that arrive with their ids and timestamps. The `sync` command's arguments
and messages are the command line's (cli/sync.py); nothing here imports cli/.
"""

# Below the hosted 100 requests a minute, leaving room for an MCP server using the same key.
# Here, not in `sync`, so that building the command line (cli/sync.py) imports nothing heavy.
DEFAULT_REQUESTS_PER_MINUTE = 90
