"""`screvi-mcp sync` into a mirror file that is damaged while the run writes it (a failing
disk, a stray copy over it): one line saying the mirror is damaged and what to do, never a
traceback, and not the plain "run again" of a sync that stopped, which would meet the same
pages. (It used to end in SQLite's traceback.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mirror_testkit import StandIn, seed, serve_stand_in

from screvi_mcp import cli

PAGE = 4096


def mangle_after_header(path: Path) -> None:
    """Overwrite every page of the file but the first (SQLite's header), as a failing disk
    would, while the sync holds it open."""
    data = bytearray(path.read_bytes())
    for offset in range(PAGE, len(data), PAGE):
        data[offset : offset + PAGE] = b"\x5a" * PAGE
    path.write_bytes(bytes(data))


class DamageOnSecondPage:
    """ASGI wrapper of the stand-in: before answering the second page of highlights, the
    mirror file is damaged, so the sync meets it between two of its own writes."""

    def __init__(self, app: Any, mirror: Path) -> None:
        self.app, self.mirror, self.done = app, mirror, False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and not self.done
            and scope["path"].endswith("/highlights")
            and b"page=2" in scope.get("query_string", b"")
        ):
            self.done = True
            mangle_after_header(self.mirror)
        await self.app(scope, receive, send)


@pytest.fixture
def damaging_stand_in(stand_in_path: Path, mirror_path: Path) -> Iterator[StandIn]:
    with serve_stand_in(stand_in_path, lambda app: DamageOnSecondPage(app, mirror_path)) as server:
        yield server


def test_a_mirror_damaged_mid_run_ends_in_one_line_naming_it(
    damaging_stand_in: StandIn,
    mirror_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base_url, key = damaging_stand_in.base_url, damaging_stand_in.key

    async def add_data() -> None:
        async with damaging_stand_in.client() as client:
            await seed(client)

    anyio.run(add_data)
    mirror_path.parent.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("SCREVI_API_KEY", key)
    monkeypatch.setenv("SCREVI_BASE_URL", base_url)
    code = cli.main(["sync", "--library", str(mirror_path), "--quiet", "--per-page", "2"])
    out, err = capsys.readouterr()
    assert out == ""
    assert code == 1, err
    assert "Traceback" not in err and key not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 2, err  # "mirroring X into Y", then the one line of the failure
    assert lines[-1].startswith("screvi-mcp sync: library_damaged: the mirror"), err
    assert "screvi-mcp check --mirror" in lines[-1] and "move the file aside" in lines[-1]
