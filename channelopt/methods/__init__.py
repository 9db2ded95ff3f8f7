"""Solver front-end: choose the method, run the solvers (with fallback), clean, re-audit, certify.

Methods:
  "lp"    every notion is linear and the utility is an expected distortion: one LP, solved by
          HiGHS by default. The optimum is certified by a dual bound computed here from the
          solver's multipliers (weak duality: valid whatever the solver did).
  "conic" some notion is convex but not linear (MIP): cvxpy with an exponential-cone solver.
          Convex, so the solver's optimum is global up to its tolerance; no independent bound.

Fallback order (used when a solver fails, or its channel fails the cleaning or the re-audit):
  LP:    HIGHS, CLARABEL, ECOS, SCS      conic: CLARABEL, ECOS, SCS
A solver named by the user is tried first; the others follow in this order.
"""

from __future__ import annotations

import time

import numpy as np

from ..audit import audit
from ..errors import ProblemError
from ..problem import SOLVERS, Problem
from .lp import Program, RawSolution, build, solve_cvxpy, solve_highs
from .result import Result, clean

LP_ORDER = ("HIGHS", "CLARABEL", "ECOS", "SCS")
CONIC_ORDER = ("CLARABEL", "ECOS", "SCS")


def method_for(problem: Problem) -> str:
    if problem.utility is None:
        raise ProblemError("utility is required to solve (add a [utility] table)")
    if not getattr(problem.utility, "linear", False):
        raise ProblemError(f"utility.kind {problem.utility.kind!r} is not a linear utility")
    return "lp" if all(n.linear_form for n in problem.privacy) else "conic"


def _attempt_order(method: str, solver: str, fallback: bool) -> list[str]:
    order = list(LP_ORDER if method == "lp" else CONIC_ORDER)
    if solver in ("auto", None):
        return order if fallback else order[:1]
    if method == "conic" and solver in ("HIGHS", "HIGHS-IPM"):
        raise ProblemError(f"solver.name {solver!r} cannot solve this problem: a notion needs a conic "
                           f"solver ({', '.join(CONIC_ORDER)})")
    return [solver] + [s for s in order if s != solver] if fallback else [solver]


def _run(prog: Program, problem: Problem, solver: str) -> RawSolution:
    if solver in ("HIGHS", "HIGHS-IPM"):
        return solve_highs(prog, ipm=solver == "HIGHS-IPM")
    return solve_cvxpy(prog, problem, solver)


def solve(problem: Problem, solver: str | None = None, *, fallback: bool = True) -> Result:
    """The optimal channel for `problem`, re-audited before it is returned.

    solver: None (the problem's own choice, default "auto"), or one of SOLVERS.
    fallback: try the next solver in the documented order when one fails or is inaccurate.
    """
    solver = problem.solver if solver is None else solver
    if solver not in SOLVERS:
        raise ProblemError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    t0 = time.perf_counter()
    method = method_for(problem)
    prog = build(problem)
    t_compile = time.perf_counter() - t0
    attempts = []
    best = None
    for name in _attempt_order(method, solver, fallback):
        t1 = time.perf_counter()
        raw = _run(prog, problem, name)
        t_solve = time.perf_counter() - t1
        record = {"solver": name, "status": raw.status, "solve_s": t_solve, "message": raw.message}
        attempts.append(record)
        if raw.status == "infeasible":
            result = Result("infeasible", solver=name, method=method,
                            message=f"no channel satisfies all privacy notions together ({name}: {raw.message})")
            best = (result, t_solve)
            break
        if raw.status == "failed":
            continue
        result = _finish(problem, prog, raw, name, method)
        record["status"] = result.status
        if result.message:
            record["message"] = result.message
        best = (result, t_solve)
        if result.status == "optimal":
            break
    if best is None:
        result = Result("solver-failed", method=method,
                        message="every solver failed: " + "; ".join(f"{a['solver']}: {a['message']}" for a in attempts))
        t_solve = sum(a["solve_s"] for a in attempts)
    else:
        result, t_solve = best
    result.attempts = attempts
    total = time.perf_counter() - t0
    result.timings = {"compile_s": t_compile, "solve_s": t_solve, "total_s": total}
    result.time_s = total
    return result


def _finish(problem: Problem, prog: Program, raw: RawSolution, solver: str, method: str) -> Result:
    q, why = clean(prog.channel(raw.z))
    if q is None:
        return Result("inaccurate", solver=solver, method=method, message=f"{solver}: {why}")
    report = audit(problem, q)
    objective = problem.utility.evaluate(problem, q)
    certificate = None
    if method == "lp" and raw.y_ub is not None and raw.y_eq is not None:
        bound = prog.dual_bound(raw.y_ub, raw.y_eq)
        certificate = {"method": "lp-duality", "lower_bound": bound, "gap": objective - bound}
    elif method == "conic":
        certificate = {"method": "convex-program", "note": f"global optimum of a convex program up to {solver}'s tolerance; no independent bound"}
    status, message = "optimal", ""
    failed = [k for k, ok in report.satisfied.items() if not ok]
    if failed:
        status = "inaccurate"
        message = f"{solver}: re-audit fails for " + ", ".join(
            f"{k} (leakage {report.leakage[k]!r})" for k in failed)
    elif raw.status != "optimal":
        status, message = "inaccurate", f"{solver} reported {raw.message}"
    return Result(status, q, objective, report.leakage, report.satisfied, report.measures,
                  certificate, solver, method, message=message)


__all__ = ["Result", "solve", "build", "method_for", "LP_ORDER", "CONIC_ORDER"]
