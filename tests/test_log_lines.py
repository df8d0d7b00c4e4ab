"""What reaches the log when something fails: one line, never a traceback.

A host shows the server's stderr to the user and often to the agent; a traceback there is
noise at best and can carry local paths and values at worst. Workers that catch the
unexpected (the embedding and article workers) log it with `log.exception`; the command
line's log set-up must turn that into one line naming the error.
"""

from __future__ import annotations

import io
import logging

from screvi_mcp.cli import configure_logging


def test_a_logged_exception_is_one_line_with_its_type_and_message() -> None:
    stream = io.StringIO()
    configure_logging(stream)
    log = logging.getLogger("screvi_mcp.test_log_lines")
    try:
        raise ValueError("database disk image is malformed")
    except ValueError:
        log.exception("embedding queued highlights failed; retrying")
    text = stream.getvalue()
    assert "Traceback" not in text
    assert text.count("\n") == 1, text
    assert "embedding queued highlights failed; retrying" in text
    assert "ValueError: database disk image is malformed" in text
