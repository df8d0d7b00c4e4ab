"""Reading query-string parameters with the spec's bounds; bad values are 400 invalid_parameter.

Over-large `per_page` and `count` are clamped to their maximum rather than refused: the hosted
service does this for /search (DESIGN.md) and clients that ask for "as many as possible" keep
working.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from screvi_mcp.local.api.error_answers import invalid_parameter
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.ids import is_uuid

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class QueryParams:
    """Typed access to a request's query string; each getter raises a 400 on a bad value."""

    def __init__(self, raw: Mapping[str, str]) -> None:
        self._raw = raw

    def _get(self, name: str) -> str | None:
        value = self._raw.get(name)
        if value is None:
            return None
        return value

    def string(self, name: str, *, max_length: int | None = None) -> str | None:
        value = self._get(name)
        if value is None:
            return None
        value = value.strip()
        if not value:
            return None
        if max_length is not None and len(value) > max_length:
            raise invalid_parameter({name: f"must be at most {max_length} characters"})
        return value

    def boolean(self, name: str) -> bool | None:
        value = self._get(name)
        if value is None or value.strip() == "":
            return None
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise invalid_parameter({name: "must be true or false"})

    def integer(
        self,
        name: str,
        *,
        default: int | None = None,
        minimum: int | None = None,
        maximum: int | None = None,
        clamp_maximum: bool = False,
    ) -> int | None:
        value = self._get(name)
        if value is None or value.strip() == "":
            return default
        try:
            number = int(value.strip())
        except ValueError:
            raise invalid_parameter({name: "must be an integer"}) from None
        if minimum is not None and number < minimum:
            raise invalid_parameter({name: f"must be at least {minimum}"})
        if maximum is not None and number > maximum:
            if clamp_maximum:
                return maximum
            raise invalid_parameter({name: f"must be at most {maximum}"})
        return number

    def number(self, name: str, *, default: float, minimum: float, maximum: float) -> float:
        value = self._get(name)
        if value is None or value.strip() == "":
            return default
        try:
            number = float(value.strip())
        except ValueError:
            raise invalid_parameter({name: "must be a number"}) from None
        if not math.isfinite(number) or number < minimum or number > maximum:
            raise invalid_parameter({name: f"must be between {minimum:g} and {maximum:g}"})
        return number

    def uuid(self, name: str) -> str | None:
        value = self.string(name)
        if value is None:
            return None
        if not is_uuid(value):
            raise invalid_parameter({name: "must be a UUID"})
        return value.lower()

    def timestamp(self, name: str) -> str | None:
        value = self.string(name)
        if value is None:
            return None
        try:
            return clock.normalise_timestamp(value)
        except (ValueError, OverflowError):
            raise invalid_parameter({name: "must be an ISO 8601 date-time"}) from None

    def choice(
        self, name: str, allowed: Iterable[str], *, default: str | None = None
    ) -> str | None:
        value = self.string(name)
        if value is None:
            return default
        options = list(allowed)
        if value not in options:
            raise invalid_parameter({name: "must be one of " + ", ".join(options)})
        return value

    def choices(self, name: str, allowed: Iterable[str]) -> list[str] | None:
        """A comma-separated list of allowed values."""
        value = self.string(name)
        if value is None:
            return None
        options = list(allowed)
        picked = [part.strip() for part in value.split(",") if part.strip()]
        bad = [part for part in picked if part not in options]
        if bad:
            raise invalid_parameter({name: "unknown value(s) " + ", ".join(bad)})
        return picked or None

    def page(self) -> int:
        page = self.integer("page", default=1, minimum=1)
        assert page is not None
        return page

    def per_page(self, *, default: int, maximum: int) -> int:
        per_page = self.integer(
            "per_page", default=default, minimum=1, maximum=maximum, clamp_maximum=True
        )
        assert per_page is not None
        return per_page
