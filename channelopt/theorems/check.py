"""How one case of a claim is judged (the single tolerance, and the three kinds of claim).

VERIFY_TOL is the one tolerance of `channelopt verify`, relative to max(1, |reference|):
  channel claims   infeasible if some notion's exact leakage exceeds its budget by more than
                   VERIFY_TOL * max(1, budget); else suboptimal if its objective is worse than the
                   certified optimum by more than VERIFY_TOL * max(1, |optimum|).
  value claims     a claimed error (or optimum) below the true value is unattainable and reported
                   as infeasible; above it, as suboptimal.
  bounds           an inequality "measured <= bound" that fails by more than the tolerance is
                   reported as infeasible (the bound does not hold).
The certified optima come from channelopt.solve (exact LP with a dual bound, or the posterior-
space LP with gap <= 1e-7); a case whose optimum is not certified raises instead of guessing.
"""

from __future__ import annotations

import numpy as np

from ..audit import audit
from ..methods import solve_certified as certified_optimum
from ..problem import Problem
from . import Outcome

VERIFY_TOL = 1e-6


def _excess(notion, leak) -> float:
    budget = notion.budget()
    if isinstance(leak, dict):
        return max((leak[k] - budget[k]) / max(1.0, abs(budget[k])) for k in leak)
    return (leak - budget) / max(1.0, abs(budget))


def channel_claim(inputs: dict, problem: Problem, q, extra: dict | None = None) -> Outcome:
    q = np.asarray(q, float)
    a = audit(problem, q)
    excess = max(_excess(n, v) for n, v in zip(problem.privacy, a.leakage.values()))
    objective = problem.utility.evaluate(problem, q)
    claimed = {"channel": q.tolist(), "objective": objective, **(extra or {})}
    r = certified_optimum(problem, closed_forms=False)     # the LP itself, never a closed form it judges
    assert r.channel is not None and r.objective is not None     # certified: both exist
    optimum = {"channel": r.channel.tolist(), "objective": r.objective}
    leakage = next(iter(a.leakage.values())) if len(a.leakage) == 1 else a.leakage
    if excess > VERIFY_TOL:
        return Outcome("infeasible", inputs, claimed, optimum, leakage, float(excess), problem=problem)
    sense = getattr(problem.utility, "sense", "min")
    gap = objective - r.objective if sense == "min" else r.objective - objective
    kind = "suboptimal" if gap > VERIFY_TOL * max(1.0, abs(r.objective)) else "holds"
    return Outcome(kind, inputs, claimed, optimum, leakage, float(gap), problem=problem)


def value_claim(inputs: dict, claimed_value: float, true_value: float, claimed: dict | None = None,
                optimum: dict | None = None) -> Outcome:
    gap = claimed_value - true_value
    scale = max(1.0, abs(true_value))
    kind = "infeasible" if gap < -VERIFY_TOL * scale else "suboptimal" if gap > VERIFY_TOL * scale else "holds"
    return Outcome(kind, inputs, {"objective": claimed_value, **(claimed or {})},
                   optimum if optimum is not None else {"objective": true_value}, None, float(abs(gap)))


def bound_claim(inputs: dict, measured: float, bound: float, claimed: dict | None = None) -> Outcome:
    excess = (measured - bound) / max(1.0, abs(bound))
    kind = "infeasible" if excess > VERIFY_TOL else "holds"
    return Outcome(kind, inputs, {"bound": bound, **(claimed or {})}, {"measured": measured}, measured,
                   float(max(excess, 0.0)))
