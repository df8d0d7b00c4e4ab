"""The embedded Screvi-compatible library: the public REST API as an ASGI app over SQLite."""
