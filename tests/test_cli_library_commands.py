"""`screvi-mcp sample` and `screvi-mcp reindex` through the real command line entry point."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from screvi_mcp import cli
from screvi_mcp.sample import SAMPLE

pytest.importorskip("onnxruntime", reason="reindex needs the `local` extra (onnxruntime)")
# (imported through screvi_mcp.local.search.onnx_runtime by the code under test)


def _count(path: Path, sql: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute(sql).fetchone()[0])


def test_sample_loads_once_and_reindex_embeds_every_live_highlight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = tmp_path / "library.sqlite3"
    expected = sum(len(source.highlights) for source in SAMPLE)

    assert cli.main(["sample", "--library", str(library)]) == 0
    assert cli.main(["sample", "--library", str(library)]) == 0  # a second load adds nothing
    assert _count(library, "SELECT count(*) FROM highlights") == expected
    assert "nothing added" in capsys.readouterr().err

    assert cli.main(["reindex", "--library", str(library), "--all"]) == 0
    err = capsys.readouterr().err
    assert f"Embedded {expected} highlights" in err
    assert f"{expected}/{expected}" in err  # the progress bar reached the end
    assert _count(library, "SELECT count(*) FROM highlight_embeddings") == expected

    # Nothing is missing any more, so a plain reindex embeds nothing.
    assert cli.main(["reindex", "--library", str(library)]) == 0
    assert "Embedded 0 highlights" in capsys.readouterr().err
