"""Solver front-end: choose the method, run the solvers (with fallback), clean, re-audit, certify.

Methods:
  "posterior-lp"  a Bayes utility (bayes-mse, histogram-mse, mutual-information, map) and only
          column-homogeneous notions: the posterior-space LP (docs/reliability.md), by vertex
          enumeration for d <= ENUMERATE_MAX_D and by column generation with certified pricing
          above. Certified global optimum with an explicit bound and gap.
  "local" a Bayes utility with a notion that is not column-homogeneous (approx-lip, mil, mip), or
          an output alphabet smaller than the certified optimum needs: multi-start SLSQP on q, a
          local solution (status "local"), with the bound of the posterior-space LP of the
          homogeneous notions alone (a relaxation) and the gap to it.
  "lp"    every notion is linear and the utility is an expected distortion: one LP, solved by
          HiGHS by default. The optimum is certified by a dual bound computed here from the
          solver's multipliers (weak duality: valid whatever the solver did).
  "conic" some notion is convex but not linear (MIP): cvxpy with an exponential-cone solver.
          Convex, so the solver's optimum is global up to its tolerance; no independent bound.

Fallback order (used when a solver fails, or its channel fails the cleaning or the re-audit):
the backends of `solvers.BACKENDS` that accept the problem kind, in table order (LP: HIGHS,
CLARABEL, ECOS, SCS; conic: CLARABEL, ECOS, SCS). A solver named by the user is tried first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..audit import audit
from ..notions import AUDIT_TOL
from ..errors import ProblemError, SolverError, did_you_mean
from ..problem import Problem
from ..solvers import BACKENDS, SOLVERS, attempt_order, canonical
from ..utility import entropy_rows
from .colgen import column_generation as structured_column_generation
from . import map_lp
from .closed import closed_form_result
from .local import local_search
from .lp import FARKAS_TOL, SPAN_LIMITS, Program, RawSolution, Relaxation, build, relaxed
from .posterior import (BESIDE_MAX_D, TIME_LIMIT, Beside, channel_from_weights, closed_form_vertices, column_generation,
                        enumerate_and_solve, posterior_rows, snapped_channel, stochastic_channel)
from .result import NEGLIGIBLE_COLUMN, Certificate, PosteriorSolution, Result, clean, reported_bound
from .structured import Family, family_for
from .symmetry import solve_orbits

ENUMERATE_MAX_D = 8
"""Largest alphabet whose admissible-posterior vertices are enumerated by default."""
POSTERIOR_CHOICES = ("auto", "enumerate", "columns", "structured")


def method_for(problem: Problem) -> str:
    """"posterior-lp", "local", "lp" or "conic" (see the module docstring)."""
    if problem.utility is None:
        raise ProblemError("utility is required to solve (Problem(utility=...), or a [utility] table in a file)")
    if not problem.utility.linear:
        return "posterior-lp" if all(n.homogeneous for n in problem.privacy) else "local"
    return "lp" if all(n.linear_form for n in problem.privacy) else "conic"


def solve(problem: Problem, solver: str | None = None, *, fallback: bool = True,
          bayes_options: dict | None = None, time_limit: float | None = None,
          progress: bool | None = None, closed_forms: bool = True) -> Result:
    """The optimal channel for `problem`, re-audited before it is returned.

    Parameters
    ----------
    solver : None (the problem's own choice, default "auto") or one of `solvers.SOLVERS`. With
        "auto", a distortion utility first tries the certified closed forms (`closed`); naming a
        solver always runs the LP.
    fallback : try the next solver in the documented order when one fails or is inaccurate.
    bayes_options : for Bayes utilities, e.g. {"posterior": "enumerate" | "columns" | "structured"},
        {"starts": 20, "seed": 0} for the local method.
    time_limit : seconds for the certified Bayes search (default `posterior.TIME_LIMIT`); when it
        runs out the best channel found is returned with status "local" and a valid bound. For LP
        and conic problems it bounds the whole solver chain (default: none; SCS alone is always
        held to `solvers.BACKENDS["SCS"].max_time`); a distortion then comes back with the best
        channel found (a reduced LP's, else a trivial one) and the best valid bound known.
    progress : a progress bar on stderr for long Bayes solves (default: when stderr is a terminal).
    closed_forms : with the "auto" solver, accept a certified closed form (`closed`) before
        building the LP; False always solves the LP (as `verify` does, to judge the closed forms).

    Returns
    -------
    Result
        `status` ("optimal" only with a certificate that closes the gap; "local", "inaccurate",
        "infeasible" with a proof, "solver-failed"), the channel, its objective recomputed from
        the channel, the audited leakage, the certificate, and how it was found (`method`,
        `solver`, `attempts`, `timings`). See docs/reliability.md.

    Raises
    ------
    ProblemError
        If the problem has no utility, the solver name is unknown or time_limit is not a
        positive finite number. Solver failures are statuses, never exceptions.
    """
    solver = problem.solver if solver is None else canonical(solver)
    if solver not in SOLVERS:
        raise ProblemError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}{did_you_mean(solver, SOLVERS)}")
    if not problem.privacy:
        warnings.warn("the problem has no privacy notion: nothing constrains the channel", stacklevel=2)
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float, np.integer, np.floating)) \
                or not np.isfinite(time_limit) or time_limit <= 0:
            raise ProblemError(f"time_limit must be a positive finite number of seconds, got {time_limit!r}")
        time_limit = float(time_limit)
    t0 = time.perf_counter()
    method = method_for(problem)
    if method in ("posterior-lp", "local"):
        result = solve_bayes(problem, method, time_limit=time_limit, progress=progress, **(bayes_options or {}))
    else:
        closed = closed_form_result(problem, time_limit=time_limit, partial=True) if closed_forms \
            and method == "lp" and solver == "auto" else None
        if closed is None or closed.status != "optimal":
            left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)
            result = solve_program(problem, method, solver, fallback, left, partial=closed)
        else:
            result = closed
            result.timings = {"solve_s": time.perf_counter() - t0}
    result.time_s = time.perf_counter() - t0
    result.timings["total_s"] = result.time_s
    return present(problem, result)


def present(problem: Problem, result: Result) -> Result:
    """The result as handed to the user: the problem's labels and utility kind attached, and the
    outputs no input reaches dropped (`Result.drop_unused`) unless the problem fixed its outputs."""
    result.labels, result.kind = problem.labels, problem.utility.kind
    result.output_size = problem.m
    if not problem.output_fixed:
        result.drop_unused()
    return result


def solve_certified(problem: Problem, **options) -> Result:
    """`solve` (with `options`), requiring a certified optimum: anything else raises SolverError
    with the status."""
    r = solve(problem, **options)
    if r.status != "optimal":
        raise SolverError(f"no certified optimum: status {r.status} ({r.message})")
    return r


# ---- LP and conic problems ---------------------------------------------------------------------

def solve_program(problem: Problem, method: str, solver: str, fallback: bool,
                  time_limit: float | None = None, partial: Result | None = None) -> Result:
    """One program, through the solvers in `attempt_order` until one is certified optimal.

    `infeasible` needs a proof: a structural one from a notion (`Notion.infeasibility`) or a
    Farkas ray checked here (`Program.farkas_margin`); a solver's unproven claim only moves on
    to the next solver. When no solver certifies an optimum, the best of the solvers' channels,
    `partial` (an audited channel found before the program, `closed.closed_form_result`) and the
    trivial channels (`trivial_channels`) is returned as `local`, with the best valid bound known
    (`_best_bound`): a solver that stopped short (time limit) still leaves multipliers, which
    bound the program whatever they are (`Program.dual_bound`).
    """
    t0 = time.perf_counter()
    for notion in problem.privacy:
        why = notion.infeasibility(problem)
        if why:
            return Result(status="infeasible", method=method, message=f"no channel satisfies {notion.name}: {why}",
                          certificate=Certificate("structural", note=why), timings={"solve_s": 0.0})
    prog = build(problem)
    t_compile = time.perf_counter() - t0
    attempts: list[dict[str, Any]] = []
    best = None
    bounds: list[tuple[float, str, str]] = []     # (bound, where from, method): solvers that stopped short
    deadline = None if time_limit is None else t0 + time_limit
    for k, name in enumerate(attempt_order(method, solver, fallback)):
        # the first solver also takes the program's relaxations (`lp.relaxed`), while not certified
        for relax in itertools.chain([None], _relaxations(prog) if k == 0 and method == "lp" else ()):
            if best is not None and best[0].status in ("optimal", "infeasible"):
                break
            program = prog if relax is None else relax.program
            t1 = time.perf_counter()
            if deadline is not None and t1 >= deadline:
                attempts.append({"solver": name, "status": "failed", "solve_s": 0.0,
                                 "message": "not tried: the time limit ran out"})
                break
            raw = BACKENDS[name](program, problem, None if deadline is None else deadline - t1)
            t_solve = time.perf_counter() - t1
            record = {"solver": name, "status": raw.status, "solve_s": t_solve, "message": raw.message}
            if relax is not None:
                record["relaxed"] = relax.dropped
            attempts.append(record)
            if raw.status == "infeasible":
                margin = program.farkas_margin(raw.y_ub, raw.y_eq) if raw.y_ub is not None else -np.inf
                if margin > FARKAS_TOL:
                    of = "" if relax is None else f", on {_relaxation_note(relax)}"
                    best = (Result(status="infeasible", solver=name, method=method,
                                   message=f"no channel satisfies all privacy notions together ({name}: {raw.message})",
                                   certificate=Certificate("farkas", note=f"infeasibility ray checked by channelopt, "
                                                                          f"normalized margin {margin:.3g}{of}")), t_solve)
                    break
                record["status"] = "failed"
                record["message"] = f"claimed infeasible ({raw.message}) without a checkable certificate"
                continue
            if raw.status == "failed":
                if method == "lp" and raw.y_ub is not None and raw.y_eq is not None:
                    bounds.append((program.dual_bound(raw.y_ub, raw.y_eq),
                                   f"{name}'s multipliers when it stopped ({raw.message})", "lp-duality"))
                continue
            result = finish(problem, program, raw, name, method, relaxation=relax)
            record["status"] = result.status
            if result.message:
                record["message"] = result.message
            if best is None or _rank(result, problem.utility.sense) > _rank(best[0], problem.utility.sense):
                best = (result, t_solve)
            if result.status == "optimal":
                break
        if best is not None and best[0].status in ("optimal", "infeasible"):
            break
    t_solve = float(sum(a["solve_s"] for a in attempts))
    found = best[0] if best is not None else None
    if found is None or found.status not in ("optimal", "infeasible"):
        said = "; ".join(f"{a['solver']}: {a['message']}" for a in attempts)
        if partial is not None and (found is None or _rank(partial, problem.utility.sense) > _rank(found, problem.utility.sense)):
            partial = dataclasses.replace(partial, message=f"{partial.message}; then no solver certified an optimum ({said})")
            found, partial = partial, found
        result = trivial_fallback(problem, method, "no solver certified an optimum (" + said + ")", found,
                                  "the bound from the solver's multipliers")
        kept = [(r.certificate.bound, r.certificate.note or f"{r.solver}'s bound", r.certificate.method)
                for r in (found, partial) if r is not None and r.certificate is not None
                and r.certificate.bound is not None and r.certificate.sense == "min"]
        result = _best_bound(problem, result, bounds + kept)
    else:
        result = found
    result.attempts = attempts
    result.timings = {"compile_s": t_compile, "solve_s": t_solve}
    return result


def _best_bound(problem: Problem, result: Result, bounds: list[tuple[float, str, str]]) -> Result:
    """`result` (a fallback's channel) with the largest of the valid lower bounds `bounds` (value,
    where from, certificate method) and, for a distortion, its trivial bound (`Utility.floor`),
    where that beats its own certificate's; its gap recomputed, and `optimal` if that bound
    certifies it."""
    u = problem.utility
    if u.sense != "min" or result.objective is None or result.channel is None:
        return result
    if getattr(u, "linear", False):
        bounds = bounds + [(u.floor(problem), "the distortion's own minimum sum_x P_x min_y D[x, y]", "distortion-minimum")]
    bounds = [b for b in bounds if np.isfinite(b[0])]
    c = result.certificate
    if not bounds or (c is not None and c.bound is not None and c.sense == "min" and c.bound >= max(b[0] for b in bounds)):
        return result
    bound, why, method = max(bounds, key=lambda b: b[0])
    why = why.removeprefix("bound: ")
    better = "a better" if c is not None and c.bound is not None else "a"
    result.certificate = Certificate(method, bound, "min", abs(result.objective - bound), note=f"bound: {why}",
                                     details=c.details if c is not None else {})
    text = (result.message or "").replace(": not optimal, no bound", ": not optimal")
    if certified(result.objective, bound):
        result.status = "optimal"
        result.message = f"{text}; certified by a bound from {why}"
    else:
        result.message = f"{text}; {better} valid bound {bound:.10g} ({why}) leaves a gap of {abs(result.objective - bound):.3g}"
    return result


def _relaxations(prog: Program):
    """`lp.relaxed(prog, limit)` for each of SPAN_LIMITS in turn, each leaving out more rows than the last."""
    dropped = 0
    for limit in SPAN_LIMITS:
        relax = relaxed(prog, limit)
        if relax is not None and relax.dropped > dropped:
            dropped = relax.dropped
            yield relax


def _better(a: float, b: float, sense: str) -> bool:
    """Whether objective a beats b for a utility of this sense ("min" or "max")."""
    return a < b if sense == "min" else a > b


def _rank(r: Result, sense: str) -> tuple:
    """Which of two results to keep: optimal > local > inaccurate, then the better objective."""
    order = {"optimal": 3, "local": 2, "inaccurate": 1}.get(r.status, 0)
    if r.objective is None:
        return (order, -np.inf)
    return (order, -r.objective if sense == "min" else r.objective)


OPTIMAL_GAP = 1e-7
"""`optimal` needs |objective - bound| <= OPTIMAL_GAP * max(1, |objective|) (LP and posterior LP)."""


def certified(objective: float, bound: float) -> bool:
    """Whether a bound certifies an objective to OPTIMAL_GAP."""
    return bool(np.isfinite(bound)) and abs(objective - bound) <= OPTIMAL_GAP * max(1.0, abs(objective))


def finish(problem: Problem, prog: Program, raw: RawSolution, solver: str, method: str,
           with_measures: bool = True, relaxation: Relaxation | None = None) -> Result:
    """A solver's raw answer as a Result: cleaned, re-audited (and repaired by `repair` when
    round-off breaks the audit), certified by LP duality (or not, for a conic program).

    With a `relaxation` (`prog` is `relaxation.program`), the channel is first mixed with the
    uniform constant channel as little as the rows left out need (`repair`); the bound from the
    relaxed program holds for the problem."""
    return settle(problem, *taken(prog, raw, method), raw, solver, method, with_measures, relaxation)


def taken(prog: Program, raw: RawSolution, method: str = "lp") -> tuple[np.ndarray | None, float | None]:
    """What only the program can give of a solver's answer: its channel (None without a solution)
    and, for an LP, the dual bound of its multipliers (None without them)."""
    channel = prog.channel(raw.z) if raw.z is not None else None
    bound = prog.dual_bound(raw.y_ub, raw.y_eq) if method == "lp" and raw.y_ub is not None and raw.y_eq is not None else None
    return channel, bound


def settle(problem: Problem, channel: np.ndarray | None, bound: float | None, raw: RawSolution, solver: str,
           method: str, with_measures: bool = True, relaxation: Relaxation | None = None) -> Result:
    """`finish` once the program has given what it alone can: the solver's channel (None: it gave
    none) and the dual bound of its multipliers (`Program.dual_bound`; None without multipliers or
    for a conic program). The rest depends on the problem only: cleaned, re-audited (repaired),
    objective recomputed, bound clamped and compared (`methods.settled` does the same for many
    points of a sweep at once)."""
    q, why = clean(channel) if channel is not None else (None, f"{solver} returned no solution")
    if q is None:
        return Result(status="inaccurate", solver=solver, method=method, message=f"{solver}: {why}")
    if relaxation is None:
        q, report, repaired = audited(problem, q, f"{solver}'s channel", with_measures)
    else:
        q, report, repaired = audited(problem, q, f"{solver}'s channel", with_measures,
                                      uniform=True, why="it was solved " + _relaxation_note(relaxation))
    if relaxation is not None and not repaired:
        repaired = f"{solver} solved the program {_relaxation_note(relaxation)}; its channel meets them as it is"
    objective = problem.utility.evaluate(problem, q)
    certificate = None
    if method == "lp" and bound is not None:
        floor = problem.utility.floor(problem)
        if not bound >= floor:           # (a bound of -inf or NaN too)
            bound, repaired = floor, "; ".join(filter(None, [repaired, (
                "the multipliers bound less than the trivial bound sum_x P_x min_y D[x, y], which is reported")]))
        certificate = Certificate("lp-duality", bound, "min", objective - bound, note=repaired)
    elif method == "conic":
        certificate = Certificate("convex-program", note=f"global optimum of a convex program up to "
                                                         f"{solver}'s tolerance; no independent bound")
    # the status rests on the audit and the bound channelopt computed, not on the solver's word
    status, message = "optimal", repaired
    failed = audit_failure(problem, report)
    if failed:
        status, message = "inaccurate", f"{solver}: {failed}"
    elif certificate is not None and certificate.bound is not None:
        if not certified(objective, certificate.bound):
            status, message = "local", (f"{solver}: feasible (audited), but the dual bound {certificate.bound:.10g} "
                                        f"leaves a gap of {certificate.gap:.3g}, more than {OPTIMAL_GAP:g} relative: "
                                        "not certified optimal" + (f"; {repaired}" if repaired else ""))
    elif raw.status != "optimal":
        status, message = "local", (f"{solver} reported {raw.message}: feasible (audited), but a convex program "
                                    "solved inaccurately and no independent bound")
    return Result(status=status, channel=q, objective=objective, leakage=report.leakage,
                  satisfied=report.satisfied, measures=report.measures, certificate=certificate,
                  solver=solver, method=method, message=message)


REPAIR_MAX = 1e-2
"""Largest mixing weight accepted as a repair; the repaired channel's objective is recomputed and
its gap to the bound decides between optimal and local, so the repair can never overstate it."""


def audited(problem: Problem, q: np.ndarray, what: str, with_measures: bool = True, uniform: bool = False,
            why: str = "round-off"):
    """(q, its audit, a note): the channel as given, or `repair`ed when it misses the audit by at
    most a REPAIR_MAX mixture (the note then says so, and `why` it missed; "" otherwise). Both
    constant channels are tried, its own output distribution's and the uniform one (`uniform`:
    that one alone), and the mixture with the better objective is kept: status fuzz, seeds 0 / 11
    (3,000 problems each), one / five more certified than with the first alone."""
    report = audit(problem, q, with_measures=with_measures)
    if report.ok:
        return q, report, ""
    tries = [(u, fixed) for u in ((True,) if uniform else (False, True)) if (fixed := repair(problem, q, u)) is not None]
    if not tries:
        return q, report, ""
    sign = 1.0 if problem.utility.sense == "min" else -1.0
    mixed_uniform, (q, t) = min(tries, key=lambda f: sign * problem.utility.evaluate(problem, f[1][0]))
    which = "the uniform constant channel" if mixed_uniform else "the constant channel of its own output distribution"
    return q, audit(problem, q, with_measures=with_measures), (
        f"{what} missed the audit ({why}); mixed with {which} (weight {t:.2g}) it passes")


def _relaxation_note(relax: Relaxation) -> str:
    return (f"without the {relax.dropped} inequality rows whose coefficients span more than {relax.limit:g} "
            f"(from {relax.span:.3g}; a relaxation, so its bound holds for the problem)")


def repair(problem: Problem, q: np.ndarray, uniform: bool = False) -> tuple[np.ndarray, float] | None:
    """The least mixture (1 - t) q + t 1 lam^T that passes the audit, lam = P q (uniform: lam =
    1 / m), and t; None if none with t <= REPAIR_MAX does (or the constant channel itself fails).

    The constant channel 1 lam^T releases nothing: every lift and every ratio between inputs is
    1, so it meets every notion with room to spare (DI: when the prior allows DI at all). For a
    convex feasible set, mixing a channel that misses the budgets by round-off with it closes the
    miss at a weight t of the order of the miss; t is found by bisection on the audit itself, and
    the objective is recomputed from the mixed channel (so the certificate's gap accounts for it).
    """
    lam = np.full(q.shape[1], 1.0 / q.shape[1]) if uniform else problem.prior @ q
    q0 = np.broadcast_to(lam, q.shape)
    if not audit(problem, q0, with_measures=False).ok:
        return None
    # bisect against half the audit's tolerance, so the repaired channel passes with a margin
    # rather than on the boundary (where an independent recomputation could round either way)
    ok = lambda t: audit(problem, (1 - t) * q + t * q0, tol=AUDIT_TOL / 2, with_measures=False).ok   # noqa: E731
    hi = next((t for t in 10.0 ** np.arange(-16, 1) if t <= REPAIR_MAX and ok(t)), None)
    if hi is None:
        return None
    lo = hi / 10 if hi > 1e-16 else 0.0
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return (1 - hi) * q + hi * q0, float(hi)


def trivial_channels(problem: Problem) -> list[tuple[str, np.ndarray]]:
    """Channels every search should beat: the best "always output y" and direct release (when the
    output alphabet allows).

    Every constant channel has the same leakage under every notion (the notions' definitions do
    not depend on how outputs are labelled), so one stands for all: for a distortion, the y of
    least worst-case expected cost, max_k sum_x P_k[x] D[x, y]; for a Bayes utility any y (a
    constant channel releases nothing, and every y gives the prior's own value). Only that one is
    built: m dense d x m channels at d = m = 1024 would take 8 GB.
    """
    d, m = problem.d, problem.m
    u = problem.utility
    y = 0
    if getattr(u, "linear", False):
        per_y = (u.cost_priors(problem) @ u.matrix_for(problem)).max(axis=0)
        y = int(np.argmin(per_y))
    out = [(f"constant (always output {y})", np.eye(m)[np.full(d, y)])]
    if m >= d:
        out.append(("direct release", np.eye(d, m)))
    return out


def trivial_result(problem: Problem, method: str, why: str, extra: Sequence[tuple[str, np.ndarray]] = ()) -> Result:
    """The best feasible trivial channel, or of `extra` ((name, channel) pairs: the notion's closed
    forms, `simple_channels`), as a `local` result (or `solver-failed` if none is)."""
    best = None
    for name, q in [*trivial_channels(problem), *extra]:
        report = audit(problem, q, with_measures=False)
        if report.ok:
            value = problem.utility.evaluate(problem, q)
            if best is None or _better(value, best[1], problem.utility.sense):
                best = (name, value, q, report)
    if best is None:
        return Result(status="solver-failed", method=method, message=why + "; no trivial channel is feasible either")
    name, value, q, report = best
    report = audit(problem, q)                     # with the measures, for the one returned
    return Result(status="local", channel=q, objective=value, leakage=report.leakage, satisfied=report.satisfied,
                  measures=report.measures, method=method, solver="trivial",
                  message=f"{why}; the {name} channel is feasible (audited) and returned: not optimal, no bound")


def trivial_fallback(problem: Problem, method: str, why: str, failed: Result | None, note: str,
                     extra: Sequence[tuple[str, np.ndarray]] = ()) -> Result:
    """`trivial_result` (with `extra`) in place of `failed` (None: nothing came back) when it has no
    channel, its channel fails the audit, or the trivial one is better; `failed`'s bound, valid
    whatever its channel, goes with it (noted). Otherwise `failed` itself."""
    trivial = trivial_result(problem, method, why, extra)
    if failed is None:
        return trivial
    sense = problem.utility.sense
    if trivial.status != "local" or trivial.objective is None:
        return failed
    if failed.channel is not None and failed.objective is not None and all(failed.satisfied.values()) \
            and not _better(trivial.objective, failed.objective, sense):
        return failed
    c = failed.certificate
    if c is not None and c.bound is not None:
        trivial.certificate = dataclasses.replace(c, gap=abs(trivial.objective - c.bound), note=note)
        trivial.message = trivial.message.replace(", no bound", f"; within {trivial.certificate.gap:.3g} of a valid "
                                                                f"bound ({note})")
    return trivial


def simple_channels(problem: Problem, family: Family | None) -> list[tuple[str, np.ndarray]]:
    """The closed-form channels of the posterior family of the problem's notion (GRR, and RR-LIP
    where feasible: `Family.simple_channels`) as (name, channel) pairs with the problem's outputs,
    for the fallbacks of the Bayes path (the channel returned is never worse than these)."""
    if family is None:
        return []
    out = []
    for name, V, lam in family.simple_channels():
        q = channel_from_weights(V, lam, problem.prior, problem.m)      # (padded to m outputs)
        if q.shape[1] == problem.m:
            out.append((name, q))
    return out


def audit_failure(problem: Problem, report) -> str:
    """"" when every notion holds, else which fail (with their leakage) and why they may."""
    failed = [k for k, ok in report.satisfied.items() if not ok]
    if not failed:
        return ""
    return "re-audit fails for " + ", ".join(
        f"{k} (leakage {report.leakage[k]!r})" for k in failed) + conditioning_hint(problem)


# ---- Bayes utilities ---------------------------------------------------------------------------

@dataclass
class Plan:
    """How the posterior-space LP of the homogeneous notions (`relaxed`) is solved."""

    relaxed: Problem
    family: Family | None       # closed-form structure, priced by the structured column generation
    rows: np.ndarray | None      # A with A @ post <= 0 (generic paths only)
    closed: np.ndarray | None    # the notion's closed-form vertices, when small enough
    enumerate_first: bool


def solve_bayes(problem: Problem, method: str, posterior: str = "auto", starts: int = 20,
                seed: int = 0, time_limit: float | None = None, progress: bool | None = None) -> Result:
    """Bayes utilities: certified posterior-space LP, or a local solution with a relaxation bound.

    posterior: "auto" (vertex enumeration for d <= ENUMERATE_MAX_D, else structured column
    generation for one LIP or ALIP (G = X) or LDP notion, else the notion's closed-form vertices or column
    generation with generic pricing), "enumerate", "columns" (generic pricing) or "structured".

    Steps: `plan_posterior` (which algorithm), `certified_optimum` (the posterior-space LP of the
    homogeneous notions), `fit_problem` (local search when that optimum is not a solution of the
    problem itself), `bayes_result` (clean, re-audit, certificate, status).
    """
    t0 = time.perf_counter()
    if posterior not in POSTERIOR_CHOICES:
        raise ProblemError(f"posterior must be 'auto', 'enumerate', 'columns' or 'structured', got {posterior!r}")
    plan = plan_posterior(problem, posterior)
    if plan.rows is not None and plan.rows.size and np.max(plan.rows @ problem.prior) > 1e-12:
        # every channel's posteriors average to the prior, and K is convex: P must lie in K
        why = "the prior itself is not an admissible posterior (every channel's posteriors average to it)"
        return Result(status="infeasible", method=method, solver="HIGHS", message=f"no channel satisfies the notions: {why}",
                      certificate=Certificate("structural", note=why), timings={"solve_s": time.perf_counter() - t0})
    try:
        solved = certified_optimum(plan, posterior, TIME_LIMIT if time_limit is None else time_limit, progress)
    except SolverError as e:
        result = trivial_result(problem, method, f"the posterior-space LP failed ({e})", simple_channels(problem, family_for(plan.relaxed)))
        result.attempts = [{"solver": "HIGHS", "status": "failed", "solve_s": time.perf_counter() - t0,
                            "message": str(e)}]
        result.timings = {"solve_s": time.perf_counter() - t0}
        return result
    t_solve = time.perf_counter() - t0
    attempts = [{"solver": "HIGHS", "status": "optimal", "solve_s": t_solve, "message": solved.info["algorithm"]}]
    q, rows_note = stochastic_channel(solved.V, solved.w, problem.prior)
    reasons = relaxation_reasons(problem, method, q)
    if reasons:
        deadline = t0 + max(TIME_LIMIT if time_limit is None else time_limit, t_solve + LAST_STEP_S)
        fitted, record = fit_problem(problem, q, starts, seed, deadline)
        record["solve_s"] = time.perf_counter() - t0 - t_solve
        attempts.append(record)
        if fitted is None:
            return Result(status="solver-failed", method="local", attempts=attempts,
                          message=f"no channel of the problem found ({record['message']}): " + "; ".join(reasons))
        q = fitted
    else:
        cleaned = clean(q, 0.0)[0]                   # as `bayes_result` cleans it
        if plan.rows is not None and plan.rows.size and not _passes(problem, cleaned):
            # the better of the snapped channel and the repair of q that `bayes_result` would make
            snapped = snapped_channel(solved.V, solved.w, problem.prior, plan.rows)
            if _passes(problem, clean(snapped, 0.0)[0]) and (cleaned is None or problem.utility.gain(
                    problem, snapped) >= problem.utility.gain(problem, audited(problem, cleaned, "the channel",
                                                                                with_measures=False)[0])):
                q = snapped
        q = np.hstack([q, np.zeros((problem.d, problem.m - q.shape[1]))])
    result = bayes_result(problem, q, solved, reasons, method, attempts[-1]["message"] if reasons else "")
    if rows_note and result.status != "inaccurate":
        result.message = "; ".join(filter(None, [result.message, rows_note]))
    if result.status == "inaccurate":
        result = trivial_fallback(problem, method, f"the posterior-space optimum failed ({result.message})", result,
                                  "the bound of the posterior-space LP", simple_channels(problem, family_for(plan.relaxed)))
    result.attempts = attempts
    result.timings = {"solve_s": time.perf_counter() - t0}
    return result


def plan_posterior(problem: Problem, posterior: str) -> Plan:
    """The homogeneous notions' problem and the algorithm for its posterior-space LP."""
    homogeneous = [n for n in problem.privacy if n.homogeneous]
    relaxed = Problem(prior=problem.prior, latent=problem.latent, values=problem.values, privacy=homogeneous,
                      utility=problem.utility, output_size=problem.output_size)
    family = family_for(relaxed)
    if posterior == "structured" and family is None:
        raise ProblemError("posterior = 'structured' needs a single lip or alip notion with G = X or a single ldp notion")
    use_family = family is not None and (posterior == "structured" or (
        posterior == "auto" and problem.d > ENUMERATE_MAX_D and not family.prefers_vertices(problem.utility.kind)))
    if use_family:
        # the structured path never needs the constraint rows (d (d - 1) x d for LDP); the prior
        # is always admissible there (u = 1 lies in the box)
        return Plan(relaxed, family, None, None, False)
    rows = posterior_rows(relaxed)
    closed = closed_form_vertices(relaxed)
    enumerate_first = posterior == "enumerate" or (
        posterior == "auto" and (problem.d <= ENUMERATE_MAX_D or closed is not None))
    return Plan(relaxed, None, rows, closed, enumerate_first)


LAST_STEP_S = 1.0
"""Seconds (at most the time limit itself) the certified search's last step gets even when an
earlier one used the time limit up."""
ORBIT_SHARE = 0.5
"""Share of the time left that the orbit LP may use before the column generation takes over: its
pricing goes through every vertex type each round (d = 1000 on three prior levels under LDP,
37 million types: about 0.7 s a round, 5-10 s before `symmetry._ldp_pricing`)."""


def certified_optimum(plan: Plan, posterior: str, time_limit: float, progress) -> PosteriorSolution:
    """MAP under linear notions: one Hamming LP (`map_lp`); else vertex enumeration, else the orbit
    LP (exchangeable symbols), else column generation; past vertex enumeration's sizes the orbit
    LP goes first (but after MAP's Hamming LP), in at most ORBIT_SHARE of the time. `time_limit`
    bounds all of them together: a step that follows one which used the time up still gets
    LAST_STEP_S to return a channel with a valid bound."""
    relaxed, util = plan.relaxed, plan.relaxed.utility
    deadline = time.perf_counter() + time_limit
    last = min(LAST_STEP_S, time_limit)          # a tiny time limit stays tiny
    left = lambda: max(deadline - time.perf_counter(), last)      # noqa: E731
    def orbit_lp() -> PosteriorSolution | None:
        if plan.family is None:
            return None
        now = time.perf_counter()
        with progress_bar(progress, "certified Bayes optimum over orbits") as report:
            orbit = solve_orbits(relaxed, plan.family, util.kind, util.target(relaxed) if util.kind == "bayes-mse" else None,
                                 deadline=now + ORBIT_SHARE * max(deadline - now, 0.0), progress=report)
        if orbit is not None and orbit.bound - orbit.gain <= 1e-9 * max(1.0, abs(orbit.gain)):
            orbit.info["algorithm"] = "orbit-lp"
            return orbit
        return None
    orbit_tried = posterior == "auto" and not plan.enumerate_first and not map_lp.applies(relaxed)
    if orbit_tried:
        # past vertex enumeration's sizes, exchangeable symbols go first: the LP over vertex types
        # is exact, with one row per class (three prior levels at d = 256, LDP histogram-MSE:
        # 0.35 s, where the column generation ended 7.5e-7 from its bound at 60 s). MAP's Hamming
        # LP goes before it: its closed forms and reduced LP take 0.01 s there against 0.35-0.67 s
        # (uniform prior at d = 4000: 6.4 / 3.1 s under LIP / LDP against 5.1 / 3.5 s)
        orbit = orbit_lp()
        if orbit is not None:
            return orbit
    if posterior == "auto" and map_lp.applies(relaxed):
        hamming = map_lp.hamming_problem(relaxed)
        closed = closed_form_result(hamming, with_measures=False, time_limit=left())   # subset RR, RR-LIP, top outputs
        lp = closed if closed is not None else solve_program(hamming, "lp", "HIGHS", True, left())
        if lp.status == "optimal" and lp.channel is not None and lp.certificate is not None \
                and lp.certificate.bound is not None:
            solved = map_lp.posterior_solution(lp.channel, relaxed.prior, lp.certificate.bound)
            solved.info["algorithm"] = ("map-hamming-lp" if closed is None else "map-hamming-top-outputs"
                                        if closed.method == "top-outputs" else f"map-hamming-{closed.solver}")
            return solved
    if plan.enumerate_first and plan.rows is not None:
        try:
            solved = enumerate_and_solve(relaxed, plan.rows, plan.closed)
            solved.info["algorithm"] = "vertex-enumeration"
            return solved
        except (ProblemError, SolverError):
            if posterior == "enumerate":
                raise
    if not orbit_tried:
        orbit = orbit_lp()
        if orbit is not None:
            return orbit
    with progress_bar(progress, "certified Bayes optimum") as report:
        if plan.family is not None:
            solved = structured_column_generation(relaxed, plan.family, time_limit=left(), progress=report)
        else:
            assert plan.rows is not None, "the generic column generation needs the notions' column rows"
            # past enumeration's default sizes, Qhull runs beside it on the other core while it may finish first
            beside = Beside.start(plan.rows, relaxed.prior) if posterior == "auto" and \
                ENUMERATE_MAX_D < relaxed.d <= BESIDE_MAX_D and relaxed.prior.min() > 0 else None
            try:
                solved = column_generation(relaxed, plan.rows, time_limit=left(), progress=report, beside=beside)
            finally:
                if beside is not None:
                    beside.close()
    solved.info.setdefault("algorithm", "column-generation")
    return solved


def relaxation_reasons(problem: Problem, method: str, q: np.ndarray) -> list[str]:
    """Why the posterior-space optimum q is not a solution of `problem` itself (empty if it is)."""
    reasons = []
    if method == "local":
        reasons.append("notions " + ", ".join(n.name for n in problem.privacy if not n.homogeneous)
                       + " are not column-homogeneous")
    if q.shape[1] > problem.m:
        reasons.append(f"the certified optimum uses {q.shape[1]} outputs but output.size is {problem.m}")
    return reasons


LOCAL_MAX_VARIABLES = 1200
"""The multi-start SLSQP runs only when d x m is at most this: its dense quadratic subproblems cost
memory ~ n^2 and time ~ n^3 per iteration (d = 24, m = 6: 2 minutes for 20 starts; d = 128,
m = 100 would ask for 29 GiB)."""


def fit_problem(problem: Problem, q: np.ndarray, starts: int, seed: int,
                deadline: float = math.inf) -> tuple[np.ndarray | None, dict]:
    """A channel of the problem itself from the posterior-space optimum q.

    When q only uses too many outputs (every notion column-homogeneous), its outputs merged down
    to m are a channel of the problem: a merged output's posterior is a convex combination of
    admissible ones (`merge_outputs`). Multi-start local search (SLSQP) then polishes it, or
    searches from scratch when some notion is not homogeneous, while the problem is small enough
    (LOCAL_MAX_VARIABLES) and time is left before `deadline`.
    """
    homogeneous = all(n.homogeneous for n in problem.privacy)
    merged = merge_outputs(problem, q, problem.m) if homogeneous and q.shape[1] > problem.m else None
    n = problem.d * problem.m
    if n > LOCAL_MAX_VARIABLES or time.perf_counter() >= deadline:
        why = (f"local search skipped: d x m = {n:,} variables (more than {LOCAL_MAX_VARIABLES:,})"
               if n > LOCAL_MAX_VARIABLES else "local search skipped: no time left")
        if merged is not None:
            return merged, {"solver": "merge", "status": "local", "message": f"outputs merged down to {problem.m}; {why}"}
        return None, {"solver": "SLSQP", "status": "failed", "message": why}
    q_local, gain, feasible = local_search(problem, starts=starts, seed=seed, init=[merged] if merged is not None else None,
                                           deadline=deadline)
    record = {"solver": "SLSQP", "status": "local" if q_local is not None else "failed",
              "message": f"{feasible} starts feasible" + (", started also from the merged outputs" if merged is not None else "")}
    if merged is not None and (q_local is None or problem.utility.gain(problem, merged) >= gain):
        return merged, {**record, "status": "local", "message": record["message"] + "; the merged outputs were best"}
    return q_local, record


def _passes(problem: Problem, cleaned: np.ndarray | None) -> bool:
    """Whether a cleaned channel (None: cleaning rejected it) passes the audit."""
    return cleaned is not None and audit(problem, cleaned, with_measures=False).ok


def bayes_result(problem: Problem, q: np.ndarray, solved: PosteriorSolution, reasons: list[str],
                 method: str, how: str = "") -> Result:
    """Clean and re-audit q; the certificate of the posterior-space LP (or of the relaxation when
    `reasons`) and the status it supports."""
    util = problem.utility
    # the gain bound is a floating-point sum: valid up to its round-off, which is added so the
    # bound reported is valid as a number (bayes-mse multiplies it by the prior variance)
    gain_bound = reported_bound(solved.bound, problem.d)
    bound, weak = clamp_bound(problem, util.from_gain(problem, gain_bound))
    cleaned, why = clean(q, NEGLIGIBLE_COLUMN if reasons else 0.0)
    if cleaned is None:          # (its bound holds whatever the channel: the fallback keeps it)
        return Result(status="inaccurate", method=method, message=why, certificate=Certificate(
            "posterior-lp" if not reasons else "relaxation-bound", bound, util.sense, details=dict(solved.info)))
    q = cleaned
    q, report, repaired = audited(problem, q, "the channel")
    objective = util.evaluate(problem, q)
    gap = abs(objective - bound)
    certificate = Certificate("posterior-lp" if not reasons else "relaxation-bound", bound, util.sense, gap,
                              details=dict(solved.info))
    if reasons:
        status, message = "local", (
            f"local solution ({how or 'SLSQP multi-start'}), not certified: " + "; ".join(reasons)
            + f"; the posterior-space LP of the homogeneous notions bounds it within {gap:.3g}")
    elif solved.bound - solved.gain > 1e-7 * max(1.0, abs(solved.gain)):
        stopped = solved.info.get("stopped")
        reason = (STOP_REASONS.get(str(stopped), f"the search stopped ({stopped})") if stopped else
                  "the LP's value and its dual bound differ by more than the status rule allows (round-off)")
        status, message = "local", (f"feasible channel within {gap:.3g} of a valid bound, not certified optimal: "
                                    + reason
                                    + (f"; {weak}" if weak else ""))
    elif not certified(util.gain(problem, q), gain_bound):     # in gain units: free of the values' scale
        status, message = "local", (f"the audited channel is {gap:.3g} from the bound, more than {OPTIMAL_GAP:g} "
                                    "relative: not certified optimal" + (f"; {repaired}" if repaired else ""))
    else:
        status, message = "optimal", repaired
    failed = audit_failure(problem, report)
    if failed:
        status, message = "inaccurate", failed
    return Result(status=status, channel=q, objective=objective, leakage=report.leakage,
                  satisfied=report.satisfied, measures=report.measures, certificate=certificate,
                  solver="HIGHS" if not reasons else "SLSQP", method="posterior-lp" if not reasons else "local",
                  message=message)


STOP_REASONS = {
    "time_limit": "the time limit ran out before the gap closed (raise time_limit / --time-limit)",
    "max_rounds": "the round limit of the column generation was reached",
    "max_nodes": "the pricing's node limit was reached",
    "master_failed": "the master LP failed (HiGHS), so the search stopped at its last optimum",
    "pricing found no improving column": ("the pricing found no column above its tolerance, but its upper bound "
                                          "(a relaxation where its search did not finish) leaves the gap open"),
}


def clamp_bound(problem: Problem, bound: float) -> tuple[float, str]:
    """The bound, replaced by the trivial one when that is tighter, and why (or "").

    Every MSE is >= 0; I(X;Y) <= H(X) and I(X;Y)/H(X) <= 1; MAP accuracy <= 1. A column
    generation stopped early can certify less than these; the message says the bound is weak.
    """
    util = problem.utility
    if util.kind in ("bayes-mse", "histogram-mse") and bound < 0:
        return 0.0, "the computed bound was below 0 (round-off, or a search stopped early), so the trivial bound 0 is reported"
    if util.kind == "mutual-information":
        top = 1.0 if util.normalized else float(entropy_rows(problem.prior))
        if bound > top:
            return top, "the computed bound exceeded H(X), so the trivial bound is reported"
    if util.kind == "map" and bound > 1:
        return 1.0, "the computed bound exceeded 1, so the trivial bound 1 is reported"
    return bound, ""


def merge_outputs(problem: Problem, q: np.ndarray, m: int) -> np.ndarray:
    """q with its outputs merged down to m, greedily: each step merges the two outputs whose merge
    loses the least gain, g(a) + g(b) - g(a + b) >= 0 with g(c) = lam_c phi(post_c) (phi convex).
    Merging two outputs sums their columns: the merged posterior is a convex combination of the
    two, so a column-homogeneous notion that holds for q holds for the result."""
    P = problem.prior
    C = q[:, q.sum(axis=0) > 0].T.copy()              # outputs as rows

    def gains(rows):
        lam = rows @ P
        return lam * problem.utility.phi(problem, rows * P[None, :] / lam[:, None])

    g = gains(C)
    n = len(C)
    L = np.full((n, n), np.inf)
    for a in range(n - 1):                            # one vectorized call per row: O(n^2 d) in all
        L[a, a + 1:] = g[a] + g[a + 1:] - gains(C[a] + C[a + 1:])
    alive = np.ones(n, dtype=bool)
    while alive.sum() > m:
        a, b = (int(i) for i in np.unravel_index(np.argmin(L), L.shape))
        C[a] += C[b]
        g[a] = gains(C[a][None, :])[0]
        alive[b] = False
        L[b, :] = L[:, b] = np.inf
        others = np.flatnonzero(alive & (np.arange(n) != a))
        loss = g[a] + g[others] - gains(C[a] + C[others]) if others.size else np.zeros(0)
        L[a, :] = L[:, a] = np.inf
        lo, hi = np.minimum(a, others), np.maximum(a, others)
        L[lo, hi] = loss
    out = C[alive].T
    return np.hstack([out, np.zeros((q.shape[0], m - out.shape[1]))])


# ---- reporting ---------------------------------------------------------------------------------

PROGRESS_DELAY = 2.0
"""Seconds before a Bayes solve's progress bar appears (short solves show none)."""


def progress_bar(enabled: bool | None, desc: str):
    """A context manager yielding a callable(rounds, gap) that drives a tqdm bar on stderr, shown
    after 2 s; on by default only when stderr is a terminal."""
    if enabled is None:
        enabled = sys.stderr.isatty()

    @contextlib.contextmanager
    def bar():
        if not enabled:
            yield None
            return
        from tqdm import tqdm

        with tqdm(desc=desc, unit=" rounds", file=sys.stderr, delay=PROGRESS_DELAY, leave=False) as t:
            def report(rounds, gap):
                t.update(1)
                t.set_postfix_str(f"gap {gap:.1e}", refresh=False)
            yield report
    return bar()


def conditioning_hint(problem: Problem) -> str:
    """Why a re-audit can fail by solver round-off: tiny prior entries or extreme budgets."""
    budgets = [float(v) for n in problem.privacy for b in n.budgets().values() for v in np.ravel(b)]
    parts = []
    if problem.prior.min() < 1e-6:
        parts.append(f"prior entries down to {problem.prior.min():.1e}")
    if budgets and max(budgets) > 10:
        parts.append(f"budgets up to {max(budgets):g} (ratios up to e^{max(budgets):g})")
    if budgets and min(budgets) < 1e-2:
        parts.append(f"budgets down to {min(budgets):g}")
    if not parts:
        return ""
    return ("; the problem is ill-conditioned (" + ", ".join(parts) + "): the solvers' ~1e-10 tolerances "
            "reach the audited log-ratios; the channel is returned for inspection but does not meet the budget")
