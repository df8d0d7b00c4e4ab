"""The MCP face of screvi-mcp: tools, resources and prompts over one ScreviClient."""
