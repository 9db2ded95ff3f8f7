"""Closed forms first: a published channel that is provably optimal, accepted only with its bound.

Before an LP is built for a distortion utility, `closed_form_result` tries

  "best-response"  every input reports the output of least distortion (direct release for
                   Hamming, MAE and squared error with m = d): the distortion's own minimum
                   sum_x P_x min_y D[x, y] bounds every channel, so it is optimal whenever it
                   satisfies every notion;
  the notion's own closed form, when the problem has one notion (`Notion.closed_form`): subset
                   randomized response for LDP (GRR for a uniform prior) and RR-LIP for LIP with
                   G = X, both for Hamming distortion, each with Lagrange multipliers built in
                   O(d^2) (`closed_forms`);
  "top-outputs"    Hamming under one LIP notion with G = X where RR-LIP is not feasible, or one
                   ID-LDP notion on at most 4 budget levels: the LP on the most probable outputs
                   with the other inputs merged, certified on the whole problem by exact pricing
                   (`top_outputs`).

A candidate is audited exactly like a solver's channel and returned only when its bound certifies
it to `frontend.OPTIMAL_GAP`; otherwise the LP runs as before, and `solve` keeps the best audited
candidate with the largest bound (`partial`) in case the LP gives no better (a time limit). Under a
time limit the channels of `merged` problems are candidates too. The result says which path was
taken: method "closed-form", solver = the form's name, certificate "closed-form-dual" (or
"distortion-minimum"); method "top-outputs", solver "HIGHS", or method "merged-inputs",
certificate "posterior-dual".
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..audit import Audit, Measures, audit, judged
from ..problem import Problem
from . import merged, top_outputs
from .result import Certificate, Result


def best_response(problem: Problem) -> tuple[np.ndarray, float]:
    """The channel sending each input to its least-distortion output, and the bound
    max over cost priors of sum_x P_x min_y D[x, y] that no channel can beat.

    Parameters
    ----------
    problem : Problem
        A problem with a distortion utility.

    Returns
    -------
    (ndarray, float)
        The channel and the distortion's own minimum, a lower bound for every channel.
    """
    q = np.zeros((problem.d, problem.m))
    q[np.arange(problem.d), problem.utility.least(problem)[0]] = 1.0
    return q, problem.utility.floor(problem)


def candidates(problem: Problem, warm: top_outputs.Warm | None = None, time_limit: float | None = None):
    """(name, channel, bound, certificate method, details, method, audit or None) for each closed
    form that applies, then the reduced LP of `top_outputs` where it applies, then (under a time
    limit, outside sweeps) the channels of `merged` problems. The audit is given where it is
    already known (the best response along a sweep, `_best_response_along`).

    Parameters
    ----------
    problem : Problem
        A problem with a distortion utility.
    warm : top_outputs.Warm, optional
        The previous sweep point's state for `top_outputs` (updated in place).
    time_limit : float, optional
        Seconds for `top_outputs` (less `merged.SHARE` of them where `merged` applies) and then
        `merged` (what is left).

    Returns
    -------
    iterator of tuple
        (name, channel, loss bound, certificate method, details, method, audit or None) per
        applicable form.
    """
    q, bound, report = best_response(problem) + (None,) if warm is None else _best_response_along(problem, warm)
    yield "best-response", q, bound, "distortion-minimum", {
        "note": "every input reports its least-distortion output; no channel has a lower distortion"}, "closed-form", report
    if len(problem.privacy) == 1:
        cf = problem.privacy[0].closed_form(problem)
        if cf is not None:
            yield (cf.name, cf.channel, cf.loss_bound, "closed-form-dual", {"citation": cf.citation, **cf.details},
                   "closed-form", None)
    limit = time_limit if warm is None and merged.applies(problem) else None      # (None: no merged problems)
    t0 = time.perf_counter()
    if top_outputs.applies(problem, along=warm is not None):
        # (under a time limit, the merged problems below keep their share of it)
        found = top_outputs.top_outputs(problem, warm, time_limit if limit is None else (1 - merged.SHARE) * limit)
        if found is not None:
            yield "HIGHS", found[0], found[1], "posterior-dual", found[2], "top-outputs", None
    if limit is not None:
        # channels to fall back on, with their bounds, in at most their share of the limit (not run
        # where the reduced LP was certified: the caller stops at the first certified candidate)
        end = min(t0 + limit, time.perf_counter() + merged.SHARE * limit)
        for q, groups, lower in merged.channels(problem, end):
            yield "merged-inputs", q, lower, "posterior-dual", {"groups": groups}, "merged-inputs", None


def _best_response_along(problem: Problem, warm: top_outputs.Warm) -> tuple[np.ndarray, float, Audit]:
    """`best_response` and its audit along a sweep. While the points differ only in the budgets
    of budget-free notions (`Notion.budget_free`: a channel's leakage does not depend on them),
    the channel, its bound and its leakage are the last point's (`warm.best`), and each notion's
    budget judges that leakage as `audit` would. Under notions whose infinite leakage stays
    infinite at any budgets (`Notion.infinite_stays`: ID-LDP), a best response that leaked
    infinitely under each of them at the last point is judged so again without its audit (a
    MinID-LDP MAE sweep at d = 32: 0.54 ms of a 4.3 ms point)."""
    key = _budget_free_key(problem)
    kept = warm.best
    if key is not None and kept is not None and _same_key(kept[0], key):
        _, q, bound, leakage = kept
        return q.copy(), bound, judged(problem, leakage)      # (a copy: a Result's own channel)
    if key is None and all(type(n).infinite_stays for n in problem.privacy):
        # its leakage under each notion was infinite: so it is at these budgets too (the best
        # response itself depends on the prior and the utility alone, and is the last point's),
        # and it fails again
        key = (problem.prior, problem.latent, problem.utility, tuple(type(n) for n in problem.privacy))
        if kept is not None and _same_key(kept[0], key) and all(np.isposinf(v) for v in kept[3].values()):
            return kept[1].copy(), kept[2], judged(problem, kept[3])
    q, bound = best_response(problem)
    report = audit(problem, q, with_measures=False)
    warm.best = (key, q.copy(), bound, report.leakage) if key is not None else None
    return q, bound, report


def _budget_free_key(problem: Problem) -> tuple | None:
    """(prior, latent secret, utility, the notions with every budget set to 1): what the best
    response and its leakage depend on, when every notion is budget-free; None otherwise."""
    if not all(type(n).budget_free for n in problem.privacy):
        return None
    unit = tuple(dataclasses.replace(n, **{k: 1.0 for k in type(n).budget_keys}) for n in problem.privacy)
    return problem.prior, problem.latent, problem.utility, unit


def _same_key(a: tuple, b: tuple) -> bool:
    """Whether two `_budget_free_key`s agree: equal priors and latent secrets, the same utility
    object, equal unit notions."""
    same_latent = a[1] is b[1] or (a[1] is not None and b[1] is not None and np.array_equal(a[1].prior, b[1].prior)
                                   and np.array_equal(a[1].conditional, b[1].conditional))
    return (np.array_equal(a[0], b[0]) and same_latent and a[2] is b[2] and len(a[3]) == len(b[3])
            and all(type(x) is type(y) and x == y for x, y in zip(a[3], b[3])))


def closed_form_result(problem: Problem, with_measures: bool = True, warm: top_outputs.Warm | None = None,
                       time_limit: float | None = None, partial: bool = False) -> Result | None:
    """The first closed form (or reduced LP) that passes the audit and whose bound certifies it
    (status optimal, method "closed-form" or "top-outputs"), or None (then the caller solves the
    LP). `with_measures`: as in `audit` (sweeps skip the general measures).

    Parameters
    ----------
    problem : Problem
        A problem with a distortion utility.
    with_measures : bool, optional
        Compute the budget-free measures of the returned channel.
    warm : top_outputs.Warm, optional
        A sweep's state for `top_outputs` (its outputs and basis from the previous point).
    time_limit : float, optional
        Seconds for `top_outputs` (the closed forms themselves take microseconds).
    partial : bool, optional
        Where none is certified, return the best candidate that passes the audit (a time-limited
        `top_outputs` channel, a closed form that is not optimal here) as a `local` Result, with
        the largest of all candidates' bounds (each one bounds every feasible channel), instead of
        None: what the caller falls back on if the LP gives no better.

    Returns
    -------
    Result or None
        A certified optimal Result; with `partial`, else the best audited candidate (status
        local, or optimal where another candidate's bound certifies it); else None.
    """
    from .frontend import certified

    best, bound, source = None, -np.inf, None
    for name, q, lower, how, details, method, report in candidates(problem, warm, time_limit):
        if lower > bound:
            bound, source = float(lower), (how, name)
        if report is None:
            report = audit(problem, q, with_measures=False)
        if not report.ok:
            continue
        objective = problem.utility.evaluate(problem, q)
        if not certified(objective, lower):
            if partial and (best is None or objective < best[1]):
                best = (name, objective, q, report, method, details)
            continue
        return Result(status="optimal", channel=q, objective=objective, leakage=report.leakage,
                      satisfied=report.satisfied, measures=Measures(problem, q) if with_measures else {},
                      solver=name, method=method,
                      certificate=Certificate(how, lower, "min", abs(objective - lower), details=details))
    if best is None or source is None:
        return None
    name, objective, q, report, method, details = best
    status = "optimal" if certified(objective, bound) else "local"
    what = ("the reduced LP on the top outputs" + (", stopped at the time limit" if details.get("stopped") else "")
            if method == "top-outputs" else f"the {name} channel" + (
                f" ({details['groups']} groups)" if method == "merged-inputs" else ""))
    why = _BOUNDS.get(source[0], "{}'s bound").format(_LP_NAMES.get(source[1], source[1]))
    return Result(status=status, channel=q, objective=objective, leakage=report.leakage, satisfied=report.satisfied,
                  measures=Measures(problem, q) if with_measures else {}, solver=name, method=method,
                  certificate=Certificate(source[0], bound, "min", abs(objective - bound), note=f"bound: {why}",
                                          details=details),
                  message=f"{what}: feasible (audited), {objective - bound:.3g} above a valid bound ({why})")


_BOUNDS = {"posterior-dual": "exact pricing of the {} LP's multipliers on the whole problem",
           "distortion-minimum": "the distortion's own minimum sum_x P_x min_y D[x, y]",
           "closed-form-dual": "the {} closed form's multipliers"}
"""Where a `partial` result's bound comes from, by certificate method."""
_LP_NAMES = {"HIGHS": "reduced", "merged-inputs": "merged"}
"""Which LP's multipliers a `posterior-dual` bound priced, by candidate name."""
