"""The solver registry: one table of the backends that solve channelopt's programs.

Each `Backend` says which problem kinds it accepts ("lp": every notion linear; "conic": some
notion convex but not linear), its options, whether it belongs to the automatic fallback chain,
and how to call it on a `methods.lp.Program`. Validation of `solver` names, the fallback order,
the CLI's `--solver` choices and the benchmark all read this table: adding a solver is one entry.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator


@dataclass(frozen=True)
class Backend:
    """One solver.

    Attributes
    ----------
    name : str
        The name users give (`solver.name`, `solve(solver=...)`, `--solver`).
    kinds : frozenset of str
        Problem kinds it solves: "lp" and/or "conic".
    module : str
        The Python module it needs (availability is checked by import lookup, not by importing).
    run : callable
        `run(program, problem, options) -> methods.lp.RawSolution`.
    options : dict
        Options passed on every call (tolerances tighter than the libraries' defaults: channel
        entries feed log-ratios in the re-audit).
    fallback : bool
        Whether the automatic chain tries it (in table order) when an earlier solver fails.
    """

    name: str
    kinds: frozenset
    module: str
    run: Callable
    options: dict = field(default_factory=dict)
    fallback: bool = True
    time_key: str | None = None
    """The backend's own name of a wall-clock limit in seconds, if it has one."""
    max_time: float | None = None
    """A limit applied on every call (first-order solvers that otherwise iterate for minutes)."""

    def available(self) -> bool:
        return importlib.util.find_spec(self.module) is not None

    def __call__(self, program, problem, time_limit: float | None = None):
        """Solve `program`; `time_limit` (seconds) bounds the call where the backend allows it."""
        options = dict(self.options)
        limits = [t for t in (time_limit, self.max_time) if t is not None]
        if limits and self.time_key:
            options[self.time_key] = max(min(limits), 1e-3)
        return self.run(program, problem, options)


def _highs(program, problem, options):
    from .methods.lp import solve_highs

    return solve_highs(program, ipm=options.get("solver") == "ipm", time_limit=options.get("time_limit"))


def _cvxpy(name: str):
    def run(program, problem, options):
        from .methods.lp import solve_cvxpy

        return solve_cvxpy(program, problem, name, options)
    return run


LP, CONIC = frozenset({"lp"}), frozenset({"lp", "conic"})

BACKENDS: dict[str, Backend] = {b.name: b for b in (
    Backend("HIGHS", LP, "highspy", _highs, time_key="time_limit"),
    Backend("HIGHS-IPM", LP, "highspy", _highs, {"solver": "ipm"}, fallback=False, time_key="time_limit"),
    Backend("CLARABEL", CONIC, "clarabel", _cvxpy("CLARABEL"),
            {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}, time_key="time_limit"),
    Backend("ECOS", CONIC, "ecos", _cvxpy("ECOS"), {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10}),
    Backend("SCS", CONIC, "scs", _cvxpy("SCS"), {"max_iters": 20000, "eps_abs": 1e-9, "eps_rel": 1e-9},
            time_key="time_limit_secs", max_time=60.0),
)}
"""Every backend, in fallback order."""

SOLVERS = ("auto", *BACKENDS)
"""The accepted solver names: "auto" (the fallback chain) or a backend."""


def fallback_order(kind: str) -> list[str]:
    """The automatic chain for a problem kind ("lp" or "conic")."""
    return [b.name for b in BACKENDS.values() if b.fallback and kind in b.kinds]


def attempt_order(kind: str, solver: str | None, fallback: bool) -> list[str]:
    """The solvers to try, in order: the named one first (then the chain, if `fallback`)."""
    from .errors import ProblemError

    order = fallback_order(kind)
    if solver in ("auto", None):
        return order if fallback else order[:1]
    if kind not in BACKENDS[solver].kinds:
        raise ProblemError(f"solver.name {solver!r} cannot solve this problem: a notion needs a conic "
                           f"solver ({', '.join(fallback_order('conic'))})")
    return [solver] + [s for s in order if s != solver] if fallback else [solver]


def canonical(name):
    """The registered spelling of a solver name given in any case ("highs" -> "HIGHS"); other
    values come back unchanged for the caller to reject."""
    if isinstance(name, str):
        for s in SOLVERS:
            if s.lower() == name.lower():
                return s
    return name


_FD_LOCK = threading.RLock()   # re-entrant: a captured block may create a quiet HiGHS


@functools.cache
def _libc():
    """The C library of this process (None where ctypes cannot open it, e.g. Windows)."""
    try:
        return ctypes.CDLL(None)
    except (OSError, TypeError):
        return None


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers (what a solver printed but libc has not written yet)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "fflush"):
        libc.fflush(None)


@contextmanager
def c_output(keep: bool = True) -> Iterator[list[str]]:
    """Capture what is written to the process's stdout and stderr (file descriptors 1 and 2)
    inside the block, by C libraries included: a solver library's own prints (SCS's
    "ERROR: init_lin_sys_work failure" reached stdout, so `solve --json` printed a line before
    its JSON document). The text is appended to the yielded list when the block ends, for the
    caller to put in its message; nothing reaches the terminal.

    Parameters
    ----------
    keep : bool, optional
        False: discard the output (to the null device, cheaper than a temporary file).

    Yields
    ------
    list of str
        Empty inside the block; afterwards holds the captured text ("" when not kept).
    """
    captured: list[str] = []
    with _FD_LOCK, (tempfile.TemporaryFile() if keep else open(os.devnull, "wb")) as tmp:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            yield captured
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            _flush_c_stdio()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            if keep:
                tmp.seek(0)
                captured.append(tmp.read().decode(errors="replace"))
            else:
                captured.append("")


def quiet_highs():
    """A `highspy.Highs` instance that prints nothing: `output_flag` off, and the banner that
    highspy (1.16 and later) writes to the C-level stdout on construction captured (`c_output`),
    so that `--json` output stays one JSON document.

    Returns
    -------
    highspy.Highs
    """
    import highspy

    with c_output(keep=False):
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h
