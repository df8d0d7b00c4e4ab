"""Which modules a package's source names in its imports, read as text (so an import
inside a function counts too): the layering tests' one scan."""

from __future__ import annotations

import ast
from pathlib import Path


def imports_under(folder: Path, prefix: str) -> list[str]:
    """`file: module` for every import below `folder` of a module starting with `prefix`."""
    reached: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            where = path.relative_to(folder)
            reached += [f"{where}: {name}" for name in names if name.startswith(prefix)]
    return reached
