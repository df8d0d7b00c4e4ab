"""The README's generated parts match the code."""

from pathlib import Path

from screvi_mcp.server.app import all_tool_specs
from screvi_mcp.server.docs import BEGIN, END, tool_table, with_tool_table

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_tool_table_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    assert with_tool_table(text) == text, (
        "README.md's tool table is stale: run `.venv/bin/python scripts/update_readme.py`"
    )


def test_tool_table_lists_every_tool_once() -> None:
    rows = [line for line in tool_table().splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert len(names) == len(all_tool_specs())
    assert len(set(names)) == len(names)
    assert {"search_highlights", "read_article", "save_article", "delete_tag"} <= set(names)
