"""Long jobs speak from the first second: reading (parsing) a large import file says so at
once and keeps saying how long it has taken, before a single highlight is written."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import pytest

from screvi_mcp import progress as progress_module
from screvi_mcp.progress import ProgressReporter
from screvi_mcp.transfer import jobs
from screvi_mcp.transfer.records import ParsedFile

FIXTURES = Path(__file__).parent / "fixtures"
WAIT_SECONDS = 30.0  # a bound against hanging, not a speed check


def test_reading_a_file_shows_progress_while_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = io.StringIO()
    lock = threading.Lock()
    seen_while_parsing: list[str] = []
    real_parse = jobs.PARSERS["kindle"]
    monkeypatch.setattr(progress_module, "HEARTBEAT_SECONDS", 0.01)

    def observed_parse(name: str, data: bytes) -> ParsedFile:
        # A parse long enough for a heartbeat: it ends once one has been written.
        deadline = time.monotonic() + WAIT_SECONDS
        while out.getvalue().count("reading:") < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        with lock:
            seen_while_parsing.append(out.getvalue())
        return real_parse(name, data)

    monkeypatch.setitem(jobs.PARSERS, "kindle", observed_parse)

    def reporter(label: str) -> ProgressReporter:
        return ProgressReporter(label, unit="highlights", stream=out, is_tty=True)

    report = jobs.import_file(
        "kindle",
        FIXTURES / "clippings_en.txt",
        tmp_path / "lib.sqlite3",
        progress=reporter,
        embed=False,
    )
    during = seen_while_parsing[0]
    assert "reading: clippings_en.txt (0.0 MB)" in during  # said before parsing ended
    assert "reading: clippings_en.txt (0.0 MB) · " in during  # and again, with the time
    final = out.getvalue()
    assert f"reading: {report.records:,} highlights" in final and "done in" in final
