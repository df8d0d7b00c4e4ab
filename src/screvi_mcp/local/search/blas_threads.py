"""numpy's BLAS on one thread in a process that searches.

A search's matrix-vector products (the full float32 scan of a small library, the
multilingual model's non-English vectors) are a few milliseconds of memory-bound work.
OpenBLAS splits each over every core by default, and on a machine whose other core runs the
search's keyword side, onnxruntime or another process, its threads wait for each other and
spin: the 10,000 x 384 e5 scan took 8.0 ms in the search process against 1.6 ms by einsum
on one core (docs/benchmarks.md). One thread computes every row's dot product in the same
order as several (each thread takes whole rows), so the scores are bit for bit the same
(checked over 80 searches of the mixed 100k library: identical pages, CPU p50 33.7 ms
against 44.1 ms). onnxruntime has its own thread pool and is not affected.
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger("screvi_mcp.local.search")

_lock = threading.Lock()
_done = False


def use_one_blas_thread() -> None:
    """Limit every BLAS library numpy has loaded to one thread, once per process (call it
    after numpy is imported: threadpoolctl only sees libraries already loaded)."""
    global _done
    with _lock:
        if _done:
            return
        _done = True
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # an install without the extra's pin: only slower, never wrong
            log.debug("threadpoolctl is not installed: BLAS keeps its default threads")
            return
        threadpool_limits(limits=1, user_api="blas")
