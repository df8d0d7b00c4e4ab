"""Reading an article body in pieces: `offset` and `max_chars` of GET /articles/{id}.

Lengths and offsets count *characters*, meaning Unicode code points (Python `str` indexes).
A stored body never holds surrogate code points (extraction replaces them), so a slice can
only ever cut between two whole characters, and in particular never inside a UTF-16 surrogate
pair. As a second line of defence this module still treats a high/low surrogate pair found in
a string as one unit (a chunk boundary moves back so as not to separate them), and replaces
any surrogate left alone in the returned text with U+FFFD, so no chunk can carry a lone
surrogate to a JSON encoder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LONE_SURROGATE = re.compile(
    "[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]"
)


@dataclass(frozen=True, slots=True)
class ContentSlice:
    """What GET /articles/{id} returns about its body."""

    content: str | None
    content_length: int  # characters in the whole body (0 when there is none yet)
    content_offset: int  # where `content` starts in the body
    content_truncated: bool  # content_offset + len(content) < content_length


def _is_high(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def _is_low(ch: str) -> bool:
    return "\udc00" <= ch <= "\udfff"


def _safe_boundary(body: str, index: int) -> int:
    """`index`, moved back by one when it would fall inside a surrogate pair."""
    if 0 < index < len(body) and _is_high(body[index - 1]) and _is_low(body[index]):
        return index - 1
    return index


def slice_content(body: str | None, offset: int = 0, max_chars: int | None = None) -> ContentSlice:
    """The part of `body` starting at character `offset`, at most `max_chars` long.

    - No body yet (`None`): content None, length 0, `content_offset` = the offset asked for,
      not truncated.
    - `offset` at or past the end: empty content, `content_offset` = the offset asked for,
      not truncated.
    - `content_offset` is otherwise the offset asked for, except that a boundary falling
      between the halves of a surrogate pair moves back by one (never for stored bodies).
    - `content_truncated` is exactly `content_offset + len(content) < content_length`.
    - `max_chars` None means "to the end". Validation of bounds (offset >= 0, max_chars >= 1000)
      is the route's job; here a negative offset counts as 0 and max_chars below 1 as 1.
    """
    offset = max(offset, 0)
    if body is None:
        return ContentSlice(None, 0, offset, False)
    length = len(body)
    if offset >= length:
        return ContentSlice("", length, offset, False)
    start = _safe_boundary(body, offset)
    if max_chars is None:
        end = length
    else:
        end = min(length, start + max(max_chars, 1))
        moved = _safe_boundary(body, end)
        # A one-character window cannot hold a whole pair: take the pair rather than nothing.
        end = moved if moved > start else min(length, end + 1)
    piece = _LONE_SURROGATE.sub("\ufffd", body[start:end])
    return ContentSlice(piece, length, start, start + (end - start) < length)
