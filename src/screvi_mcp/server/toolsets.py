"""The toolsets tools are grouped in (`--toolsets`), named once.

A module of its own, importing nothing, so that the command line can list them without
loading the MCP layer.
"""

from __future__ import annotations

from typing import Literal, get_args

Toolset = Literal["highlights", "search", "sources", "articles", "tags", "review"]
TOOLSETS: tuple[Toolset, ...] = get_args(Toolset)
