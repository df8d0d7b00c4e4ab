"""local/storage sits below local/api: the store, the library file and the input models
never import the REST service (which would let HTTP answers leak into the store's rules)."""

from __future__ import annotations

import ast
from pathlib import Path

from screvi_mcp.local import storage


def test_no_storage_module_imports_the_api_even_lazily() -> None:
    folder = Path(storage.__file__).parent
    reached: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            where = path.relative_to(folder)
            reached += [f"{where}: {n}" for n in names if n.startswith("screvi_mcp.local.api")]
    assert reached == []
