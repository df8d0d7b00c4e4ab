"""Notes about the answer of the current tool call (how fresh a mirror's answer is).

Collected here by the mirror and appended to the tool result by the MCP layer: a list set per
call, None outside one. Its own module, with no imports, so the hosted path loads nothing of
the mirror to look for notes.
"""

from __future__ import annotations

import contextvars

call_notes: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "screvi_mirror_call_notes", default=None
)


def add_note(text: str) -> None:
    notes = call_notes.get()
    if notes is not None and text not in notes:
        notes.append(text)
