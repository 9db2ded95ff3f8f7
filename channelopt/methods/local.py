"""A local baseline: multi-start SLSQP directly on q (non-convex for Bayes utilities).

It gives *local* solutions only: no certificate. channelopt uses it where the posterior-space LP
does not apply (a notion that is not column-homogeneous, or an output alphabet smaller than the
certified optimum needs), and the tests and benchmarks use it to measure how far a local method
falls short of the certified optimum.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .lp import build


def local_search(problem, starts: int = 20, seed: int = 0, init: list | None = None,
                 maxiter: int = 500, deadline: float = math.inf) -> tuple[np.ndarray | None, float, int]:
    """Best feasible channel over `starts` SLSQP runs from random channels (plus `init`, run
    first); no run starts after `deadline` (a `time.perf_counter()` value).

    Returns (channel, gain, number of runs that ended feasible). The utility is maximized as the
    gain sum_y lam[y] phi(post_y) (docs/spec.md §4), the same quantity the posterior LP certifies.
    """
    from scipy.optimize import minimize

    prog = build(problem, linear_costs=False, substitute=False)
    d, m, nq = problem.d, problem.m, problem.d * problem.m
    util = problem.utility
    rng = np.random.default_rng(seed)
    A_ub, b_ub, A_eq, b_eq = prog.A_ub.toarray(), prog.b_ub, prog.A_eq.toarray(), prog.b_eq
    cons: list[dict[str, Any]] = [{"type": "ineq", "fun": lambda z: b_ub - A_ub @ z, "jac": lambda z: -A_ub},
            {"type": "eq", "fun": lambda z: A_eq @ z - b_eq, "jac": lambda z: A_eq}]
    for notion in prog.conic:  # notions that are not linear give smooth inequalities g(q) >= 0
        for g in notion.smooth(problem):
            cons.append({"type": "ineq", "fun": lambda z, g=g: g(z[:nq].reshape(d, m))})
    bounds = [(float(lo) if np.isfinite(lo) else None, float(hi) if np.isfinite(hi) else None)
              for lo, hi in zip(prog.lb, prog.ub)]

    def negative_gain(z):
        q = np.clip(z[:nq], 0, None).reshape(d, m)
        return -util.gain(problem, q)

    starts_z = []
    for q0 in (init or []):
        z = np.zeros(prog.n)
        z[:nq] = np.asarray(q0).ravel()
        starts_z.append(z)
    for _ in range(starts):
        z = np.zeros(prog.n)
        z[:nq] = rng.dirichlet(np.ones(m), size=d).ravel()
        z[nq:] = np.clip(rng.random(prog.n - nq), prog.lb[nq:], np.minimum(prog.ub[nq:], 1.0))
        starts_z.append(z)
    best, best_gain, feasible = None, -np.inf, 0
    for z0 in starts_z:
        if time.perf_counter() >= deadline:
            break
        res = minimize(negative_gain, z0, method="SLSQP", constraints=cons, bounds=bounds,
                       options={"maxiter": maxiter, "ftol": 1e-12}, callback=_stop_at(deadline))
        z = res.x
        ok = (np.all(A_ub @ z - b_ub <= 1e-7) and np.all(np.abs(A_eq @ z - b_eq) <= 1e-7)
              and all(c["fun"](z) >= -1e-7 for c in cons[2:]))
        if not ok:
            continue
        feasible += 1
        if -res.fun > best_gain:
            best, best_gain = np.clip(z[:nq], 0, None).reshape(d, m), -res.fun
    return best, best_gain, feasible


def _stop_at(deadline: float):
    """An SLSQP callback ending the run at `deadline` (its last iterate is still checked)."""
    def callback(*_):
        if time.perf_counter() >= deadline:
            raise StopIteration
    return callback
