"""The baseline: a minimal `MCPServer` with one tool, served like screvi-mcp is.

Run as a script (not `-m bench...`) so that its start-up imports nothing but the SDK:
`python bench/minimal_server.py` (stdio) or `python bench/minimal_server.py --http PORT`.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer

mcp = MCPServer("minimal")


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "--http":
        import uvicorn

        app = mcp.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=int(argv[1]), log_level="warning")
    else:
        mcp.run()


if __name__ == "__main__":
    main(sys.argv[1:])
