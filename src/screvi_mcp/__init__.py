"""screvi-mcp: an MCP server for a Screvi highlights and reading library."""

__version__ = "0.1.0"
