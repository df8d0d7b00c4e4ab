"""What the library's rules refuse, as small domain errors; no HTTP in here.

The store raises these; the request pipeline (`local/api/request_pipeline.py`) turns each
into the spec's answer (`local/api/error_answers.py: from_store`): NotFound is 404 not_found,
Conflict is 409 conflict, Invalid is 422 validation_failed with its per-field reasons.
Code that calls the store outside a request (import, mirror) catches them without knowing
HTTP.
"""

from __future__ import annotations

from typing import Any

from screvi_mcp.local.storage.ids import missing


class StoreError(Exception):
    """A request the library refuses; `message` is what the caller is told."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(StoreError):
    """No live `kind` has this id."""

    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(missing(kind, ident))
        self.kind = kind
        self.ident = ident


class Conflict(StoreError):
    """The change clashes with what is stored; `extra` names what it clashes with."""

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.extra = extra


class Invalid(StoreError):
    """Values the rules refuse, by field name, each with the reason."""

    def __init__(self, fields: dict[str, str]) -> None:
        super().__init__("Validation failed")
        self.fields = fields
