"""Regenerate the tool table in README.md from the code (CI checks that it is current)."""

from pathlib import Path

from screvi_mcp.server.docs import with_tool_table

readme = Path(__file__).resolve().parents[1] / "README.md"
readme.write_text(with_tool_table(readme.read_text(encoding="utf-8")), encoding="utf-8")
print(f"updated {readme}")
