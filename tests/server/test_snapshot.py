"""Every tool's public face (name, title, description, input schema, annotations) against a
snapshot checked in beside this file: a change to what agents see must be made on purpose.

Accept a change with:
    SCREVI_UPDATE_SNAPSHOT=1 .venv/bin/python -m pytest tests/server/test_snapshot.py
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

from server_testkit import mcp_client

from screvi_mcp.server.app import all_tool_specs

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools.json"
UPDATE_ENV = "SCREVI_UPDATE_SNAPSHOT"
UPDATE_COMMAND = f"{UPDATE_ENV}=1 .venv/bin/python -m pytest tests/server/test_snapshot.py"


async def current_tools(library_path: Path) -> list[dict[str, Any]]:
    async with mcp_client(library_path) as client:
        tools = (await client.list_tools()).tools
    faces = []
    for tool in sorted(tools, key=lambda tool: tool.name):
        wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        faces.append(
            {key: wire.get(key) for key in ("name", "title", "description", "inputSchema")}
            | {"annotations": wire.get("annotations")}
        )
    return faces


def as_text(faces: list[dict[str, Any]]) -> str:
    return json.dumps(faces, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


async def test_tool_schemas_match_the_snapshot(library_path: Path) -> None:
    current = as_text(await current_tools(library_path))
    if os.environ.get(UPDATE_ENV) == "1":
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(current, encoding="utf-8")
        return
    assert SNAPSHOT.exists(), f"no snapshot yet: run `{UPDATE_COMMAND}` to write one"
    expected = SNAPSHOT.read_text(encoding="utf-8")
    if current != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                current.splitlines(keepends=True),
                fromfile="snapshots/tools.json",
                tofile="the server now",
                n=2,
            )
        )
        raise AssertionError(
            "The tools agents see differ from tests/server/snapshots/tools.json. If the change "
            f"is intended, accept it with:\n    {UPDATE_COMMAND}\n\n{diff}"
        )


def test_snapshot_covers_every_tool() -> None:
    faces = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert len(faces) == len(all_tool_specs())
    assert all(face["annotations"] and face["inputSchema"]["type"] == "object" for face in faces)
