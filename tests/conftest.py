"""Settings every test run shares, and how the suite is spread over processes.

The English search model defaults to all-mpnet-base-v2 where its wheels are installed
(scripts/test.sh installs them). It costs about 5x MiniLM's CPU per text, so tests that are
not about the model keep the light MiniLM, through the setting a user would use; tests of the
model choice set or unset it themselves (tests/local/search/test_mpnet.py). Subprocesses
inherit it.

With `-n 3 --dist loadgroup` (scripts/test.sh) each pytest-xdist worker builds the fixtures
of the tests it runs, so the tests that share a session-scoped fixture (the e2e library and
its servers, the seeded server template, a search evaluation library) form one group, run
on one worker that builds it once: the tests linked through any session fixture they share,
so two libraries nobody uses together (the labelled set, the blind set) are built side by
side on two workers. A test using none is in the group of its module (its module-scoped
fixtures likewise). Derived from the fixtures themselves, so a new session fixture needs no
list kept here. Without `-n` nothing changes.

The groups reach the scheduler through a file, not through xdist's own `xdist_group` mark:
on pytest 9.2 the mark is silently ignored (pytest-dev/pytest-xdist#1386: xdist renames each
test `id@group`, and pytest 9.2 no longer lets it), which built every session fixture once
on each worker. The long groups are handed out first, so that the short ones fill in around
them and the workers finish together: those holding a session fixture, a module-scoped one
(a module's own library: the article evaluation, the multilingual library), or an
`e2e`/`bench` test.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("SCREVI_ENGLISH_MODEL", "minilm")
# No test's server installs the default model in the background (pip in every server):
# tests/local/search/test_auto_install.py turns it on for itself.
os.environ.setdefault("SCREVI_AUTO_INSTALL_MODEL", "0")


def _shared(item: pytest.Item, scope: str) -> set[str]:
    """The fixtures of `scope` the test uses that the project declares ("where::name"; a
    fixture's baseid is "" for pytest's and plugins' own)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return set()
    return {
        f"{definition.baseid}::{definition.argname}"
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
        if definition.scope == scope and definition.baseid
    }


def _groups(items: list[pytest.Item]) -> dict[str, str]:
    """nodeid -> group: the tests linked by the session fixtures they share (named by the
    first such fixture in sorted order), else the test's module."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    uses = {item.nodeid: sorted(_shared(item, "session")) for item in items}
    for names in uses.values():
        for name in names:
            parent[root(name)] = root(names[0])
    members: dict[str, list[str]] = {}
    for name in parent:
        members.setdefault(root(name), []).append(name)
    label = {top: min(names) for top, names in members.items()}
    return {
        nodeid: label[root(names[0])] if names else nodeid.split("::")[0]
        for nodeid, names in uses.items()
    }


_GROUPS_DIR = pytest.StashKey[Path]()
_LONG_MARKS = ("bench", "e2e")  # in the order their groups are handed out
_SHORT = len(_LONG_MARKS) + 1


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.stash[_GROUPS_DIR] = Path(tempfile.mkdtemp(prefix="screvi-test-groups-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _GROUPS_DIR in config.stash:
        shutil.rmtree(config.stash[_GROUPS_DIR], ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """The controller tells each worker where to write the groups of what it collected."""
    node.workerinput["screvi_groups"] = str(node.config.stash[_GROUPS_DIR])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    where = getattr(config, "workerinput", {}).get("screvi_groups")
    if where is None:
        return
    groups = _groups(items)
    rank: dict[str, int] = {}
    for item in items:
        group = groups[item.nodeid]
        rank[group] = min(rank.get(group, _SHORT), _rank(item, group))
    # Stable: the long groups first (the benchmark's first of all), each group's tests in
    # their collected order.
    items.sort(key=lambda item: rank[groups[item.nodeid]])
    path = Path(where) / f"{config.workerinput['workerid']}.json"
    path.write_text(json.dumps(groups))


def _rank(item: pytest.Item, group: str) -> int:
    """When the test's group is handed out: by the first of _LONG_MARKS it carries (the
    benchmark's tests take a minute or more each: started late, one would end the run alone), then
    the groups holding a session or module fixture, then the rest."""
    for rank, mark in enumerate(_LONG_MARKS):
        if item.get_closest_marker(mark):
            return rank
    if group != item.nodeid.split("::")[0] or _shared(item, "module"):
        return len(_LONG_MARKS)
    return _SHORT


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """xdist's scope scheduling, by the groups the workers wrote, in collected order."""

        def __init__(self, config: pytest.Config, log: Any) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False  # the workers' order: long groups first
            self._groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:  # every worker has collected by the first call
                self._groups = {}
                for path in config.stash[_GROUPS_DIR].glob("*.json"):
                    self._groups.update(json.loads(path.read_text()))
            return self._groups.get(nodeid) or nodeid.split("::")[0]

    return GroupScheduling(config, log)
