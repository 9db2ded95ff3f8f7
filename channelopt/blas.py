"""One BLAS thread for the small dense products of audits and batches.

The products channelopt does per channel are small (d x m with d in the tens to hundreds, or
batches of 5 x 5 systems): a multithreaded BLAS spends more on waking its threads than on the
arithmetic, and under load (another process on the cores) a 0.05 ms product can take 25 ms.
`one_thread()` limits the BLAS libraries loaded in the process to one thread for a block.
"""

from __future__ import annotations

import contextlib
import functools
import threading

_held = threading.local()

@functools.cache
def _controller():
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS, so the controller sees it too)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def one_thread():
    """A context manager limiting every loaded BLAS to one thread (about 17 microseconds; free
    inside another one, as an audit inside a sweep's point: the limit is already held).

    Returns
    -------
    context manager
        `threadpoolctl`'s limiter; the previous limits come back on exit of the outermost.
    """
    if getattr(_held, "depth", 0):
        _held.depth += 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    with _controller().limit(limits=1, user_api="blas"):
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
