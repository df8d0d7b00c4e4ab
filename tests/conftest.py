"""Settings every test run shares, and how the suite is spread over processes.

The English search model defaults to all-mpnet-base-v2 where its wheels are installed
(scripts/test.sh installs them). It costs about 5x MiniLM's CPU per text, so tests that are
not about the model keep the light MiniLM, through the setting a user would use; tests of the
model choice set or unset it themselves (tests/local/search/test_mpnet.py). Subprocesses
inherit it.

With `-n 2 --dist loadgroup` (scripts/test.sh) each pytest-xdist worker builds the fixtures
of the tests it runs, so a test goes in the group of the outermost folder whose
session-scoped fixtures it uses (the e2e library and its servers, the seeded server
template, a search evaluation library: built once, on one worker), else in the group of its
module (its module-scoped fixtures likewise). Derived from the fixtures themselves, so a new
session fixture needs no list kept here. Without `-n` nothing changes.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("SCREVI_ENGLISH_MODEL", "minilm")


def _group(item: pytest.Item) -> str:
    module = item.nodeid.split("::")[0]
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return module
    # A fixture's baseid is where it is declared ("" for pytest's and plugins' own).
    homes = {
        definition.baseid
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
        if definition.scope == "session" and definition.baseid
    }
    return min(homes, key=len) if homes else module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item)))
