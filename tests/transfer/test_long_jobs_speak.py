"""Long jobs speak from the first second: reading (parsing) a large import file says so at
once and keeps saying how long it has taken, before a single highlight is written."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from screvi_mcp import progress as progress_module
from screvi_mcp.progress import ProgressReporter
from screvi_mcp.transfer import jobs
from screvi_mcp.transfer.records import ParsedFile
from testsupport.polling import wait_until

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
        wait_until(
            lambda: out.getvalue().count("reading:") >= 2,
            timeout=WAIT_SECONDS,
            what="no heartbeat while the file was parsed",
            every=0.01,
        )
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


# Each format in turn in one fresh interpreter (one start-up, not three), checked after each:
# what is loaded stays loaded, so a format that loaded the model is the first one that says so.
EXPORT_PROBE = """
import sys, time
from pathlib import Path
from screvi_mcp.transfer.exporters import export_library
for kind in sys.argv[1].split(","):
    started = time.perf_counter()
    export_library(kind, Path(sys.argv[2]) / kind, Path(sys.argv[3]))
    loaded = sorted(name for name in ("numpy", "onnxruntime", "tokenizers") if name in sys.modules)
    print(kind, time.perf_counter() - started, ",".join(loaded) or "-")
"""
KINDS = ("csv", "json", "markdown")


def test_an_export_loads_no_model_and_embeds_nothing(tmp_path: Path) -> None:
    """An export reads rows: it used to start the search index (loading the model, 3-6 s
    before a 50-highlight export wrote a byte) and the article worker with it."""
    import subprocess
    import sys

    from screvi_mcp.local.api.bodies import HighlightCreate
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights
    from testsupport.embeddings import pending_embeddings

    path = tmp_path / "library.sqlite3"
    library = Library.open(path)
    items = [HighlightCreate(content=f"passage {n} about tides") for n in range(50)]
    highlights.create_many(library, items, bulk=True)
    library.close()
    (tmp_path / "out").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", EXPORT_PROBE, ",".join(KINDS), str(tmp_path / "out"), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [line.split() for line in done.stdout.splitlines()]
    assert [kind for kind, _, _ in lines] == list(KINDS)
    for kind, seconds, loaded in lines:
        assert loaded == "-", f"export {kind} loaded {loaded}"  # no model, not even numpy
        print(f"export {kind} of 50 highlights: {float(seconds):.2f}s")
    assert all((tmp_path / "out" / kind).exists() for kind in KINDS)  # each one wrote
    assert pending_embeddings(path) == 50  # left for the next server or import to embed
