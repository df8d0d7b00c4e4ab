"""The tools, one module per toolset; each declares its tools with `@tool(annotations)`."""
