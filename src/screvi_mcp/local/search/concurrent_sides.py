"""The thread pool that runs a search's keyword side beside its semantic side.

Shared by every library of the process. Each pool thread gets its own SQLite connection per
library (`Library.connection()` is per thread), closed with the library. The pool is small:
a search uses one of its threads for a few milliseconds, and more threads than cores only
add switching.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

POOL_THREADS = 4

_pool = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="screvi-search-side")


def submit(work: Callable[[], T]) -> Future[T]:
    return _pool.submit(work)
