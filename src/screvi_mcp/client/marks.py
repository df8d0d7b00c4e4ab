"""What each endpoint method does to the library, marked on the method itself.

A layer that treats reads and writes differently (the mirror answers reads from its copy and
sends writes to Screvi first) reads these marks instead of keeping its own list of method
names, so a new endpoint is routed by the line that declares it. A mark is an attribute on
the function and nothing more: calling a marked method costs what it did before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

# read: answered from the library's data; write: changes it; fixed: an answer that does not
# depend on the library (the skill file), so no copy of the library can be out of date for it.
Access = Literal["read", "write", "fixed"]
ACCESS_ATTRIBUTE = "__screvi_access__"

F = TypeVar("F", bound=Callable[..., Any])


def _mark(access: Access) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        setattr(fn, ACCESS_ATTRIBUTE, access)
        return fn

    return mark


reads = _mark("read")
writes = _mark("write")
fixed = _mark("fixed")


def access_of(member: Any) -> Access | None:
    """The mark of a method (None: not an endpoint method)."""
    access: Access | None = getattr(member, ACCESS_ATTRIBUTE, None)
    return access


def endpoint_methods(cls: type) -> dict[str, Access]:
    """Every marked method of `cls` (its bases' included), by name."""
    marked: dict[str, Access] = {}
    for name in dir(cls):
        access = access_of(getattr(cls, name, None))
        if access is not None:
            marked[name] = access
    return marked
