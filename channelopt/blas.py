"""One BLAS thread for the small dense products of audits and batches.

The products channelopt does per channel are small (d x m with d in the tens to hundreds, or
batches of 5 x 5 systems): a multithreaded BLAS spends more on waking its threads than on the
arithmetic, and under load (another process on the cores) a 0.05 ms product can take 25 ms.
`one_thread()` limits the BLAS libraries loaded in the process to one thread for a block.
"""

from __future__ import annotations

import functools


@functools.cache
def _controller():
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS, so the controller sees it too)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_thread():
    """A context manager limiting every loaded BLAS to one thread (about 10 microseconds).

    Returns
    -------
    context manager
        `threadpoolctl`'s limiter; the previous limits come back on exit.
    """
    return _controller().limit(limits=1, user_api="blas")
