"""`screvi-mcp --mirror` refuses a file that is not a mirror of this account, and says why."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mirror_testkit import StandIn, sync

from testsupport.command import run_command


def test_a_file_that_is_not_a_mirror_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In-process: refusals come before anything is served (testsupport/command.py).
    library = str(tmp_path / "plain.sqlite3")
    code, out, err = run_command(monkeypatch, capsys, "--mirror", "--library", library)
    assert code == 2
    assert "not a mirror yet" in err and "screvi-mcp sync" in err
    assert out == ""


async def test_a_mirror_of_another_key_is_refused_without_showing_either_key(
    stand_in: StandIn,
    mirror_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await sync(stand_in, mirror_path)
    other = "sk_live_someone_else_entirely"
    env = {"SCREVI_API_KEY": other, "SCREVI_BASE_URL": stand_in.base_url}
    argv = ("--mirror", "--library", str(mirror_path))
    # On a worker thread: the command runs its own event loop, and this test is in one.
    code, _, err = await anyio.to_thread.run_sync(
        lambda: run_command(monkeypatch, capsys, *argv, env=env)
    )
    assert code == 2 and "--new-key" in err
    assert other not in err and stand_in.key not in err


async def test_the_mirror_over_stdio_writes_through_with_the_key(
    stand_in: StandIn, mirror_path: Path, tmp_path: Path
) -> None:
    """`screvi-mcp --mirror` as a host starts it: a real stdio subprocess."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.types import TextContent
    from mirror_testkit import search_ids, seed

    async with stand_in.client() as client:
        await seed(client)
    await sync(stand_in, mirror_path)
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SCREVI_") or k == "SCREVI_ENGLISH_MODEL"
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "screvi_mcp", "--mirror", "--library", str(mirror_path)],
        env={**clean, "SCREVI_API_KEY": stand_in.key, "SCREVI_BASE_URL": stand_in.base_url},
    )
    stderr_path = tmp_path / "stderr.log"
    with stderr_path.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            created = await session.call_tool(
                "create_highlight", {"content": "Kelp forests shelter otters."}
            )
            found = await session.call_tool("search_highlights", {"query": "kelp otters"})
    assert not created.is_error and not found.is_error
    assert isinstance(found.content[0], TextContent) and "Kelp forests" in found.content[0].text
    async with stand_in.client() as source:
        assert await search_ids(source, "kelp otters")
    stderr = stderr_path.read_text()
    assert f"mirror of {stand_in.base_url} at {mirror_path}" in stderr
    assert stand_in.key not in stderr


def test_odd_mirror_paths_are_refused_in_one_line_and_nothing_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--mirror --library` at a folder or at a file that is not a library ended in a SQLite
    traceback; a path not synced yet was created (folder and empty library) just to say it
    was not a mirror."""
    notes = tmp_path / "notes.txt"
    notes.write_text("not a library\n", encoding="utf-8")
    missing = tmp_path / "no-such-folder" / "mirror.sqlite3"
    unsynced = tmp_path / "mirror.sqlite3"
    for library, expected in (
        (tmp_path, "is a directory"),
        (notes, "is not a screvi-mcp library"),
        (missing, "does not exist"),
        (unsynced, "not a mirror yet"),
    ):
        code, _, err = run_command(monkeypatch, capsys, "--mirror", "--library", str(library))
        assert code == 2, err
        assert expected in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err
    assert not missing.parent.exists() and not unsynced.exists()
    assert notes.read_text(encoding="utf-8") == "not a library\n"
