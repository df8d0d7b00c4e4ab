"""local/storage sits below local/api: the store, the library file and the input models
never import the REST service (which would let HTTP answers leak into the store's rules)."""

from __future__ import annotations

from pathlib import Path

from screvi_mcp.local import storage
from testsupport.imports import imports_under


def test_no_storage_module_imports_the_api_even_lazily() -> None:
    assert imports_under(Path(storage.__file__).parent, "screvi_mcp.local.api") == []
