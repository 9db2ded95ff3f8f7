"""Shared pieces of the figure reproductions: certified solves, closed-form audits, joints."""

from __future__ import annotations

import numpy as np

from ..audit import audit
from ..problem import Joint, Problem
from ..methods import solve_certified
from ..utility import Bayes


def certified(problem: Problem) -> float:
    """Objective of the certified optimum; anything less than certified is an error here."""
    objective = solve_certified(problem).objective
    assert objective is not None                    # a certified optimum has a channel and its value
    return objective


def closed_form_point(problem: Problem, q: np.ndarray) -> tuple[float, bool, float]:
    """(objective, feasible, worst leakage) of a closed-form channel under the problem's notions."""
    a = audit(problem, q)
    leak = max(float(max(v.values())) if isinstance(v, dict) else float(v) for v in a.leakage.values())
    return problem.utility.evaluate(problem, q), a.ok, leak


def correlated(prior, rho: float) -> Joint:
    """A secret G on the same alphabet as X with the same marginal and correlation coefficient rho:
    Pr(X = x | G = g) = rho [x = g] + (1 - rho) P_x. Then Pr(G=g, X=x) = P_g (rho [x=g] + (1-rho) P_x),
    symmetric, so Cov(X, G) = rho Var(X) and corr(X, G) = rho for any values."""
    P = np.asarray(prior, float)
    return Joint(P, rho * np.eye(P.size) + (1 - rho) * P[None, :])


def mse_problem(prior, privacy, *, latent=None, values=None, kind="bayes-mse", name=None) -> Problem:
    return Problem(prior=prior, privacy=privacy, utility=Bayes(kind), latent=latent, values=values, name=name)


def grid(lo: float, hi: float, step: float, quick: bool) -> np.ndarray:
    pts = np.round(np.arange(lo, hi + step / 2, step), 10)
    return pts[::2] if quick else pts


def note_closed_form(f) -> None:
    """Add to the figure's notes where its closed-form points violate their notion, and by how much
    the feasible ones trail the certified optimum of the same panel, eps and notion."""
    closed = [r for r in f.rows if "closed form" in r["series"]]
    bad = [r for r in closed if not r["feasible"]]
    if bad:
        worst = max(bad, key=lambda r: r["leakage"])
        f.notes.append(f"closed form violates its notion at {len(bad)}/{len(closed)} points; worst: {worst['panel']}, "
                       f"x = {worst['x']}, leakage {worst['leakage']:.4f}")
    key = lambda r: (r["panel"], r["series"].split(" ")[0], r["x"])   # noqa: E731  (panel, notion label, x)
    opt = {key(r): r["y"] for r in f.rows if "certified" in r["series"]}
    gaps = [r["y"] - opt[key(r)] for r in closed if r["feasible"] and key(r) in opt]
    if gaps:
        f.notes.append(f"where the closed form is feasible it trails the certified optimum by at most {max(gaps):.3g}")
