"""Finding, among many location ranges, the ones that overlap a given range, without
comparing it with every one (a book of 20,000 Kindle clips made that 200 million checks).

Ranges are kept in buckets of `BUCKET` locations; a query looks only in the buckets its own
range covers. A range wider than `MAX_WIDTH` locations is not kept: a Kindle location is
about 150 bytes, so even the API's longest highlight (20,000 characters) spans a few hundred,
and a range thousands wide is a broken clip, not a passage to compare others with.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

ValueT = TypeVar("ValueT")

BUCKET = 32
MAX_WIDTH = 4096


class SpanIndex(Generic[ValueT]):
    """Values by location range; `overlapping` answers in the order they were added."""

    def __init__(self) -> None:
        self._buckets: dict[int, dict[int, tuple[tuple[int, int], ValueT]]] = {}
        self._where: dict[int, tuple[int, int]] = {}
        self._next = 0

    @staticmethod
    def indexable(span: tuple[int, int] | None) -> bool:
        return span is not None and 0 <= span[1] - span[0] <= MAX_WIDTH

    def add(self, span: tuple[int, int], value: ValueT) -> int:
        """Keep `value` under `span` (if indexable); returns its handle for `remove`."""
        handle = self._next
        self._next += 1
        if self.indexable(span):
            self._where[handle] = span
            for bucket in self._range(span):
                self._buckets.setdefault(bucket, {})[handle] = (span, value)
        return handle

    def remove(self, handle: int) -> None:
        span = self._where.pop(handle, None)
        if span is not None:
            for bucket in self._range(span):
                self._buckets.get(bucket, {}).pop(handle, None)

    def overlapping(self, span: tuple[int, int]) -> list[ValueT]:
        if not self.indexable(span):
            return []
        found: dict[int, ValueT] = {}
        for bucket in self._range(span):
            for handle, (held, value) in self._buckets.get(bucket, {}).items():
                if held[0] <= span[1] and span[0] <= held[1]:
                    found[handle] = value
        return [found[handle] for handle in sorted(found)]

    @staticmethod
    def _range(span: tuple[int, int]) -> Iterator[int]:
        return iter(range(span[0] // BUCKET, span[1] // BUCKET + 1))


_MODULUS = (1 << 61) - 1
_BASE = 1_000_003


def shares_half(a: str, b: str) -> bool:
    """Whether `a` and `b` have a common substring at least half as long as the shorter:
    what `SequenceMatcher.find_longest_match` told in quadratic time, here in linear time
    (Rabin-Karp over every window of that length; a hash match is checked for real)."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    width = -(-len(short) // 2)
    if width == 0:
        return True
    top = pow(_BASE, width - 1, _MODULUS)
    windows: set[int] = set()
    for value in _rolling(long, width, top):
        windows.add(value)
    for start, value in enumerate(_rolling(short, width, top)):
        if value in windows and short[start : start + width] in long:
            return True
    return False


def _rolling(text: str, width: int, top: int) -> Iterator[int]:
    if len(text) < width:
        return
    value = 0
    for char in text[:width]:
        value = (value * _BASE + ord(char)) % _MODULUS
    yield value
    for index in range(width, len(text)):
        value = ((value - ord(text[index - width]) * top) * _BASE + ord(text[index])) % _MODULUS
        yield value
